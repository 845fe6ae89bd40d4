/* Schema 2's tables and their use (names.h): one hash map keyed by
 * (host, vpid, table, id); an entry written again (tracing re-enabled in
 * the process) replaces the old one. Must never: trust an id, or keep an
 * event's string past the call that gave it. */
#include "read/names.h"

#include <stdlib.h>
#include <string.h>

#include "read/limits.h"
#include "hoptrace_schema.h"
#include "util/grow.h"


enum { T_PROCESS, T_DESC, T_PEER };

typedef struct entry {
  char *host;
  int64_t vpid;
  uint32_t id;
  uint8_t table, kind;
  char *text[3]; /* process: name; desc: name, service, endpoint; peer: text */
} entry;

/* A span side waiting for its names, with its own copy of its strings. */
typedef struct held {
  hop_event ev;
  char *hostname, *procname, *key; /* key: a span_k's key-value's */
} held;

struct names {
  entry **slots;
  size_t cap, n;
  uint64_t bytes; /* the entries' text */
  uint64_t unresolved;
  held *held;  /* oldest first */
  size_t n_held, cap_held;
};

names *names_new(void) { return calloc(1, sizeof(names)); }

static uint64_t entry_bytes(const entry *e) {
  uint64_t n = strlen(e->host) + 1;
  for (int i = 0; i < 3; i++)
    n += strlen(e->text[i]) + 1;
  return n;
}

static void entry_free(entry *e) {
  if (e == NULL)
    return;
  free(e->host);
  for (int i = 0; i < 3; i++)
    free(e->text[i]);
  free(e);
}

static void held_free(held *h) {
  free(h->hostname);
  free(h->procname);
  free(h->key);
}

void names_free(names *s) {
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->n_held; i++)
    held_free(&s->held[i]);
  free(s->held);
  for (size_t i = 0; i < s->cap; i++)
    entry_free(s->slots[i]);
  free(s->slots);
  free(s);
}

/* The length kept of a string of the run (ht_limits.string_bytes, cut
 * where a UTF-8 sequence starts): a table entry keeps its host cut so, and
 * every lookup keys on the same cut host, or a long host's entries would
 * never be found again. */
static size_t cut_len(const char *t) {
  size_t n = strnlen(t, ht_limits.string_bytes + 1);
  if (n <= ht_limits.string_bytes)
    return n;
  n = ht_limits.string_bytes;
  while (n > 0 && ((unsigned char)t[n] & 0xc0) == 0x80)
    n--;
  return n;
}

static uint64_t key_hash(const char *host, size_t host_len, int64_t vpid, uint8_t table,
                         uint32_t id) {
  uint64_t h = 1469598103934665603u;
  for (size_t i = 0; i < host_len; i++)
    h = (h ^ (uint8_t)host[i]) * 1099511628211u;
  h = (h ^ (uint64_t)vpid) * 1099511628211u;
  h = (h ^ table) * 1099511628211u;
  return (h ^ id) * 1099511628211u;
}

/* The slot of (host as kept, vpid, table, id): its entry, or the empty
 * one where it would go. */
static entry **slot_of(names *s, const char *host, int64_t vpid, uint8_t table,
                       uint32_t id) {
  size_t len = cut_len(host);
  size_t i = (size_t)key_hash(host, len, vpid, table, id) & (s->cap - 1);
  for (;; i = (i + 1) & (s->cap - 1)) {
    entry *e = s->slots[i];
    if (e == NULL || (e->vpid == vpid && e->table == table && e->id == id &&
                      strncmp(e->host, host, len) == 0 && e->host[len] == '\0'))
      return &s->slots[i];
  }
}

static const entry *find(names *s, const char *host, int64_t vpid, uint8_t table,
                         uint32_t id) {
  return s->cap == 0 ? NULL : *slot_of(s, host, vpid, table, id);
}

static int grow(names *s) {
  size_t cap = s->cap ? s->cap * 2 : 256;
  entry **slots = calloc(cap, sizeof(*slots));
  if (slots == NULL)
    return -1;
  entry **old = s->slots;
  size_t old_cap = s->cap;
  s->slots = slots;
  s->cap = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i] != NULL)
      *slot_of(s, old[i]->host, old[i]->vpid, old[i]->table, old[i]->id) = old[i];
  free(old);
  return 0;
}

/* Text of at most ht_limits.string_bytes (counted when cut): a table
 * entry lives the whole run. */
static char *bounded_dup(const char *t) {
  size_t n = cut_len(t);
  if (t[n] != '\0')
    ht_drops.strings++;
  return strndup(t, n);
}

/* Sets (or, written again after a re-enable, replaces) an entry; an
 * entry past the limits (ht_limits.names, .name_bytes) or with an id no
 * span can name is not kept, and counted. */
static int put(names *s, const char *host, int64_t vpid, uint8_t table,
               uint32_t id, uint8_t kind, const char *a, const char *b,
               const char *c) {
  if (id > HT_SIDE_DESC_IN(UINT32_MAX)) { /* a side holds 16-bit ids */
    ht_drops.names++;
    return 0;
  }
  if ((s->n + 1) * 2 > s->cap && grow(s) != 0)
    return -1;
  entry *e = calloc(1, sizeof(*e));
  if (e == NULL)
    return -1;
  *e = (entry){.host = bounded_dup(host), .vpid = vpid, .id = id, .table = table,
               .kind = kind, .text = {bounded_dup(a), bounded_dup(b != NULL ? b : ""),
                                      bounded_dup(c != NULL ? c : "")}};
  if (e->host == NULL || !e->text[0] || !e->text[1] || !e->text[2]) {
    entry_free(e);
    return -1;
  }
  entry **slot = slot_of(s, host, vpid, table, id);
  uint64_t bytes = s->bytes - (*slot != NULL ? entry_bytes(*slot) : 0) + entry_bytes(e);
  if ((*slot == NULL && s->n >= ht_limits.names) || bytes > ht_limits.name_bytes) {
    ht_drops.names++; /* the entries already kept stay */
    entry_free(e);
    return 0;
  }
  if (*slot == NULL)
    s->n++;
  s->bytes = bytes;
  entry_free(*slot);
  *slot = e;
  return 0;
}

static const char *const start_frame[] = {"", "cs", "sr", "cs", "sr"};
static const char *const end_frame[] = {"", "cr", "ss", "", ""};

/* A side's process named: by its own context, or by the process table. */
static bool process_named(names *s, const hop_event *ev) {
  return (ev->procname != NULL && ev->procname[0] != '\0') || ev->vpid < 0 ||
         find(s, ev->hostname, ev->vpid, T_PROCESS, 0) != NULL;
}

/* Everything a side needs is known: its names, its peer's, its process's
 * (a flight recorder's ring may hold a span before the tables its
 * process wrote again a moment later). */
static bool resolvable(names *s, const hop_event *ev) {
  return find(s, ev->hostname, ev->vpid, T_DESC, ev->desc_id) != NULL &&
         (ev->peer_id == 0 || find(s, ev->hostname, ev->vpid, T_PEER, ev->peer_id) != NULL) &&
         process_named(s, ev);
}

/* The process's name from its table, when the side has none. */
static void name_process(names *s, hop_event *ev) {
  if ((ev->procname == NULL || ev->procname[0] == '\0') && ev->vpid >= 0) {
    const entry *e = find(s, ev->hostname, ev->vpid, T_PROCESS, 0);
    if (e != NULL)
      ev->procname = e->text[0];
  }
}

static int hold(names *s, const hop_event *ev) {
  if (ht_grow(&s->held, &s->cap_held, s->n_held + 1, sizeof(held), 64) != 0)
    return -1;
  held *h = &s->held[s->n_held];
  h->ev = *ev;
  h->hostname = strdup(ev->hostname);
  h->procname = strdup(ev->procname != NULL ? ev->procname : "");
  h->key = ev->key != NULL ? strdup(ev->key) : NULL;
  if (h->hostname == NULL || h->procname == NULL || (ev->key != NULL && h->key == NULL)) {
    held_free(h);
    return -1;
  }
  h->ev.hostname = h->hostname;
  h->ev.procname = h->procname;
  h->ev.key = h->key;
  s->n_held++;
  return 0;
}

/* desc and peer ids -> names, and the frames' annotations; unknown ids
 * leave "" and are counted. */
static void resolve(names *s, hop_event *ev) {
  const entry *d = find(s, ev->hostname, ev->vpid, T_DESC, ev->desc_id);
  const entry *p = ev->peer_id != 0 ? find(s, ev->hostname, ev->vpid, T_PEER, ev->peer_id)
                                    : NULL;
  if (d == NULL || (ev->peer_id != 0 && p == NULL))
    s->unresolved++;
  ev->span_kind = d != NULL ? d->kind : 0;
  ev->name = d != NULL ? d->text[0] : "";
  ev->service = d != NULL ? d->text[1] : "";
  ev->endpoint = d != NULL ? d->text[2] : "";
  ev->peer = p != NULL ? p->text[0] : "";
}

static void frames(hop_event *ev) {
  int k = ev->span_kind >= 0 && ev->span_kind <= 4 ? ev->span_kind : 0;
  ev->annotation = (ev->frames & 1) ? start_frame[k] : "";
  ev->end_annotation = (ev->frames & 2) ? end_frame[k] : "";
}

/* A side of time ts_ns has waited NAMES_HOLD_NS by now_ns: in unsigned
 * arithmetic, as both times are the trace's (a signed difference of two
 * far apart overflows). */
static bool held_enough(int64_t ts_ns, int64_t now_ns) {
  return ts_ns <= now_ns && (uint64_t)now_ns - (uint64_t)ts_ns > (uint64_t)NAMES_HOLD_NS;
}

int names_release(names *s, int64_t now_ns, bool all,
                  int (*emit)(void *arg, const hop_event *ev), void *arg) {
  size_t kept = 0;
  int rc = 0;
  for (size_t i = 0; i < s->n_held; i++) {
    held *h = &s->held[i];
    bool ready = resolvable(s, &h->ev);
    if (rc != 0 || (!ready && !all && !held_enough(h->ev.ts_ns, now_ns))) {
      s->held[kept++] = *h; /* still waiting (or the run stopped) */
      continue;
    }
    resolve(s, &h->ev); /* counted as unresolved when not ready */
    name_process(s, &h->ev);
    frames(&h->ev);
    rc = emit(arg, &h->ev);
    held_free(h);
  }
  s->n_held = kept;
  return rc;
}

bool names_waiting(const names *s, int64_t now_ns) {
  return s->n_held > 0 && held_enough(s->held[0].ev.ts_ns, now_ns);
}

int names_apply(names *s, hop_event *ev) {
  const char *host = ev->hostname != NULL ? ev->hostname : "";
  ev->hostname = host;
  switch (ev->kind) {
  case HOP_PROCESS:
    return put(s, host, ev->vpid, T_PROCESS, 0, 0, ev->procname, NULL, NULL) == 0 ? 0 : -1;
  case HOP_DESC:
    return put(s, host, ev->vpid, T_DESC, ev->desc_id, (uint8_t)ev->span_kind, ev->name,
               ev->service, ev->endpoint) == 0 ? 0 : -1;
  case HOP_PEER:
    return put(s, host, ev->vpid, T_PEER, ev->peer_id, 0, ev->peer, NULL, NULL) == 0 ? 0 : -1;
  case HOP_SPAN_SIDE:
    if (ev->name == NULL && !ev->named_apart) { /* span_s carries its names */
      /* past ht_limits.open_spans waiting, a side goes on with what is
       * known now (unnamed: counted) */
      if (!resolvable(s, ev) && s->n_held < ht_limits.open_spans)
        return hold(s, ev) == 0 ? 0 : -1; /* names_release passes it on */
      resolve(s, ev);
    }
    frames(ev);
    break;
  default:
    break;
  }
  name_process(s, ev);
  return 1;
}

uint64_t names_unresolved(const names *s) { return s->unresolved; }
