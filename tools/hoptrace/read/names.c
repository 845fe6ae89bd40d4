/* Schema 2's tables and their use (names.h): one hash map keyed by
 * (host, vpid, table, id); an entry written again (tracing re-enabled in
 * the process) replaces the old one. A held span side hangs on the
 * placeholder of the first entry it misses, so a table event examines
 * only its own waiters, and pins the entries it found (kept, retired,
 * while pinned, when replaced). Must never: trust an id, keep an event's
 * string past the call that gave it, or rescan every held side. */
#include "read/names.h"

#include <stdlib.h>
#include <string.h>

#include "read/limits.h"
#include "hoptrace_schema.h"
#include "util/grow.h"


enum { T_PROCESS, T_DESC, T_PEER };

typedef struct held held;

/* An entry, or a placeholder (!defined) that the sides waiting for its
 * key hang on: a table event releases only those, not every held side. */
typedef struct entry {
  char *host; /* cut as every lookup cuts it (cut_len) */
  int64_t vpid;
  uint32_t id;
  uint8_t table, kind;
  bool defined;
  bool retired; /* replaced by other text while pinned: out of the table */
  uint64_t pins; /* held sides named by it (freed, when retired, at 0) */
  held *waiters; /* a placeholder's, newest first */
  char *text[3]; /* process: name; desc: name, service, endpoint; peer: text */
} entry;

/* The table entries a span side uses. */
enum { R_DESC, R_PEER, R_PROCESS, N_REFS };

/* A span side waiting for its names, with its own copy of its strings and
 * the entries it found so far, as they were at its time (a desc written
 * again with other text later does not rename it). */
struct held {
  hop_event ev;
  char *hostname, *procname, *key; /* key: a span_k's key-value's */
  entry *pin[N_REFS];
  entry *waits;           /* the placeholder it hangs on, or NULL */
  held *w_prev, *w_next;  /* in waits->waiters */
  held *older, *newer;    /* every held side, in the order held */
  held *next_ready;
};

struct names {
  entry **slots;
  size_t cap, n;        /* n: slots used, placeholders too */
  uint64_t n_defined;   /* the entries ht_limits.names bounds */
  uint64_t bytes;       /* the entries' text, retired ones too */
  uint64_t unresolved, redefined, examined;
  held *oldest, *newest;
  size_t n_held;
  held *ready, *last_ready; /* named now, to pass on in this order */
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

static void unpin(names *s, entry *e) {
  if (e != NULL && --e->pins == 0 && e->retired) {
    s->bytes -= entry_bytes(e);
    entry_free(e);
  }
}

static void held_free(names *s, held *h) {
  for (int r = 0; r < N_REFS; r++)
    unpin(s, h->pin[r]);
  free(h->hostname);
  free(h->procname);
  free(h->key);
  free(h);
}

void names_free(names *s) {
  if (s == NULL)
    return;
  while (s->oldest != NULL) {
    held *h = s->oldest;
    s->oldest = h->newer;
    held_free(s, h);
  }
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

/* The entry of the key, defined (a placeholder is no entry), or NULL. */
static entry *find(names *s, const char *host, int64_t vpid, uint8_t table, uint32_t id) {
  entry *e = s->cap == 0 ? NULL : *slot_of(s, host, vpid, table, id);
  return e != NULL && e->defined ? e : NULL;
}

static size_t home(const names *s, const entry *e) {
  return (size_t)key_hash(e->host, strlen(e->host), e->vpid, e->table, e->id) & (s->cap - 1);
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

/* Takes e out of the table, moving back the entries after it that
 * probed past its slot (linear probing needs no tombstone). */
static void slot_remove(names *s, const entry *e) {
  size_t mask = s->cap - 1;
  size_t i = (size_t)(slot_of(s, e->host, e->vpid, e->table, e->id) - s->slots), j = i;
  s->slots[i] = NULL;
  for (j = (j + 1) & mask; s->slots[j] != NULL; j = (j + 1) & mask) {
    size_t k = home(s, s->slots[j]);
    if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
      continue; /* still reachable from its home */
    s->slots[i] = s->slots[j];
    s->slots[j] = NULL;
    i = j;
  }
  s->n--;
}

/* Text of at most ht_limits.string_bytes (counted when cut): a table
 * entry lives the whole run. */
static char *bounded_dup(const char *t) {
  size_t n = cut_len(t);
  if (t[n] != '\0')
    ht_drops.strings++;
  return strndup(t, n);
}

/* The key of a side's entry r, when the side uses it. */
static bool uses(const hop_event *ev, int r, uint8_t *table, uint32_t *id) {
  *table = r == R_DESC ? T_DESC : r == R_PEER ? T_PEER : T_PROCESS;
  *id = r == R_DESC ? ev->desc_id : r == R_PEER ? ev->peer_id : 0;
  if (r == R_PEER)
    return ev->peer_id != 0;
  if (r == R_PROCESS) /* named by its own context, or not a process's */
    return (ev->procname == NULL || ev->procname[0] == '\0') && ev->vpid >= 0;
  return true;
}

/* Hangs h on the placeholder of a key (made when none). */
static int wait_on(names *s, held *h, uint8_t table, uint32_t id) {
  if ((s->n + 1) * 2 > s->cap && grow(s) != 0)
    return -1;
  const char *host = h->ev.hostname;
  entry **slot = slot_of(s, host, h->ev.vpid, table, id), *e = *slot;
  if (e == NULL) {
    e = calloc(1, sizeof(*e));
    if (e == NULL || (e->host = strndup(host, cut_len(host))) == NULL) {
      free(e);
      return -1;
    }
    e->vpid = h->ev.vpid;
    e->table = table;
    e->id = id;
    *slot = e;
    s->n++;
  }
  h->waits = e;
  h->w_prev = NULL;
  h->w_next = e->waiters;
  if (e->waiters != NULL)
    e->waiters->w_prev = h;
  e->waiters = h;
  return 0;
}

/* Off its placeholder; a placeholder nobody waits on leaves the table. */
static void unwait(names *s, held *h) {
  entry *e = h->waits;
  if (e == NULL)
    return;
  if (h->w_prev != NULL)
    h->w_prev->w_next = h->w_next;
  else
    e->waiters = h->w_next;
  if (h->w_next != NULL)
    h->w_next->w_prev = h->w_prev;
  h->waits = NULL;
  h->w_prev = h->w_next = NULL;
  if (e->waiters == NULL && !e->defined) {
    slot_remove(s, e);
    entry_free(e);
  }
}

/* Pins the entries h finds now, the ones in effect at its time, and hangs
 * it on the first it misses. 1: it has them all; 0: it waits; -1: out of
 * memory. Each call is counted (names_examined): a side is examined once
 * when held and once per entry it waited for, whatever else is written. */
static int settle(names *s, held *h) {
  s->examined++;
  for (int r = 0; r < N_REFS; r++) {
    uint8_t table;
    uint32_t id;
    if (h->pin[r] != NULL || !uses(&h->ev, r, &table, &id))
      continue;
    entry *e = find(s, h->ev.hostname, h->ev.vpid, table, id);
    if (e == NULL)
      return wait_on(s, h, table, id) == 0 ? 0 : -1;
    e->pins++;
    h->pin[r] = e;
  }
  return 1;
}

static void ready(names *s, held *h) {
  h->next_ready = NULL;
  if (s->last_ready != NULL)
    s->last_ready->next_ready = h;
  else
    s->ready = h;
  s->last_ready = h;
}

/* e, a placeholder, is defined now: its waiters (oldest first) pin it
 * and are ready, or wait for their next missing entry. */
static int wake(names *s, entry *e) {
  held *h = e->waiters;
  e->waiters = NULL;
  while (h != NULL && h->w_next != NULL)
    h = h->w_next;
  int rc = 0;
  while (h != NULL) {
    held *newer = h->w_prev;
    h->waits = NULL;
    h->w_prev = h->w_next = NULL;
    int r = rc == 0 ? settle(s, h) : 0; /* out of memory: left to its time */
    if (r < 0)
      rc = -1;
    else if (r == 1)
      ready(s, h);
    h = newer;
  }
  return rc;
}

static bool same_text(const entry *a, const entry *b) {
  return a->kind == b->kind && strcmp(a->text[0], b->text[0]) == 0 &&
         strcmp(a->text[1], b->text[1]) == 0 && strcmp(a->text[2], b->text[2]) == 0;
}

/* Sets (or, written again after a re-enable, replaces) an entry; an
 * entry past the limits (ht_limits.names, .name_bytes) or with an id no
 * span can name is not kept, and counted. Other text under a kept id is
 * counted (names_redefined); the held sides named by the old text keep
 * it. Only the sides waiting for this entry are examined again. */
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
               .kind = kind, .defined = true,
               .text = {bounded_dup(a), bounded_dup(b != NULL ? b : ""),
                        bounded_dup(c != NULL ? c : "")}};
  if (e->host == NULL || !e->text[0] || !e->text[1] || !e->text[2]) {
    entry_free(e);
    return -1;
  }
  entry **slot = slot_of(s, host, vpid, table, id), *old = *slot;
  bool kept = old != NULL && old->defined;
  if (kept && same_text(old, e)) { /* written again, as it was */
    entry_free(e);
    return 0;
  }
  /* a pinned entry replaced stays, retired, until its sides pass */
  uint64_t bytes = s->bytes - (kept && old->pins == 0 ? entry_bytes(old) : 0) + entry_bytes(e);
  if ((!kept && s->n_defined >= ht_limits.names) || bytes > ht_limits.name_bytes) {
    ht_drops.names++; /* the entries already kept stay */
    entry_free(e);
    return 0;
  }
  s->bytes = bytes;
  if (kept) {
    s->redefined++;
    if (old->pins > 0)
      old->retired = true;
    else
      entry_free(old);
    *slot = e;
    return 0;
  }
  s->n_defined++;
  if (old == NULL) {
    *slot = e;
    s->n++;
    return 0;
  }
  old->kind = e->kind; /* a placeholder: defined in place, for its waiters */
  memcpy(old->text, e->text, sizeof(old->text));
  old->defined = true;
  free(e->host);
  free(e);
  return wake(s, old);
}

static const char *const start_frame[] = {"", "cs", "sr", "cs", "sr"};
static const char *const end_frame[] = {"", "cr", "ss", "", ""};

/* Everything a side needs is known: its names, its peer's, its process's
 * (a flight recorder's ring may hold a span before the tables its
 * process wrote again a moment later). */
static bool resolvable(names *s, const hop_event *ev) {
  for (int r = 0; r < N_REFS; r++) {
    uint8_t table;
    uint32_t id;
    if (uses(ev, r, &table, &id) && find(s, ev->hostname, ev->vpid, table, id) == NULL)
      return false;
  }
  return true;
}

/* The process's name from its table, when the event has none. */
static void name_process(names *s, hop_event *ev) {
  if ((ev->procname == NULL || ev->procname[0] == '\0') && ev->vpid >= 0) {
    const entry *e = find(s, ev->hostname, ev->vpid, T_PROCESS, 0);
    if (e != NULL)
      ev->procname = e->text[0];
  }
}

/* desc and peer ids -> names, and the process's name: from pin (a held side's) where set, else the tables as
 * they are now; unknown ids leave "" and are counted. */
static void resolve(names *s, hop_event *ev, entry *const *pin) {
  const entry *e[N_REFS] = {0};
  for (int r = 0; r < N_REFS; r++) {
    uint8_t table;
    uint32_t id;
    if (uses(ev, r, &table, &id))
      e[r] = pin != NULL && pin[r] != NULL ? pin[r]
                                           : find(s, ev->hostname, ev->vpid, table, id);
  }
  const entry *d = e[R_DESC], *p = e[R_PEER];
  if (d == NULL || (ev->peer_id != 0 && p == NULL))
    s->unresolved++;
  ev->span_kind = d != NULL ? d->kind : 0;
  ev->name = d != NULL ? d->text[0] : "";
  ev->service = d != NULL ? d->text[1] : "";
  ev->endpoint = d != NULL ? d->text[2] : "";
  ev->peer = p != NULL ? p->text[0] : "";
  if (e[R_PROCESS] != NULL)
    ev->procname = e[R_PROCESS]->text[0];
}

static void frames(hop_event *ev) {
  int k = ev->span_kind >= 0 && ev->span_kind <= 4 ? ev->span_kind : 0;
  ev->annotation = (ev->frames & 1) ? start_frame[k] : "";
  ev->end_annotation = (ev->frames & 2) ? end_frame[k] : "";
}

static int hold(names *s, const hop_event *ev) {
  held *h = calloc(1, sizeof(*h));
  if (h == NULL)
    return -1;
  h->ev = *ev;
  h->hostname = strdup(ev->hostname);
  h->procname = strdup(ev->procname != NULL ? ev->procname : "");
  h->key = ev->key != NULL ? strdup(ev->key) : NULL;
  if (h->hostname == NULL || h->procname == NULL || (ev->key != NULL && h->key == NULL)) {
    held_free(s, h);
    return -1;
  }
  h->ev.hostname = h->hostname;
  h->ev.procname = h->procname;
  h->ev.key = h->key;
  h->older = s->newest;
  if (s->newest != NULL)
    s->newest->newer = h;
  else
    s->oldest = h;
  s->newest = h;
  s->n_held++;
  int r = settle(s, h);
  if (r == 1)
    ready(s, h);
  return r < 0 ? -1 : 0;
}

/* A side of time ts_ns has waited NAMES_HOLD_NS by now_ns: in unsigned
 * arithmetic, as both times are the trace's (a signed difference of two
 * far apart overflows). */
static bool held_enough(int64_t ts_ns, int64_t now_ns) {
  return ts_ns <= now_ns && (uint64_t)now_ns - (uint64_t)ts_ns > (uint64_t)NAMES_HOLD_NS;
}

/* Passes h on, named with what it has, and forgets it. */
static int pass(names *s, held *h, int (*emit)(void *arg, const hop_event *ev), void *arg) {
  if (h->older != NULL)
    h->older->newer = h->newer;
  else
    s->oldest = h->newer;
  if (h->newer != NULL)
    h->newer->older = h->older;
  else
    s->newest = h->older;
  s->n_held--;
  unwait(s, h);
  resolve(s, &h->ev, h->pin); /* counted as unresolved when not ready */
  frames(&h->ev);
  int rc = emit(arg, &h->ev);
  held_free(s, h);
  return rc;
}

int names_release(names *s, int64_t now_ns, bool all,
                  int (*emit)(void *arg, const hop_event *ev), void *arg) {
  int rc = 0;
  while (rc == 0 && s->ready != NULL) {
    held *h = s->ready;
    if ((s->ready = h->next_ready) == NULL)
      s->last_ready = NULL;
    rc = pass(s, h, emit, arg);
  }
  /* in the order held: a side behind a later one (time went back) goes
   * with it */
  while (rc == 0 && s->oldest != NULL && (all || held_enough(s->oldest->ev.ts_ns, now_ns)))
    rc = pass(s, s->oldest, emit, arg);
  return rc;
}

bool names_waiting(const names *s, int64_t now_ns) {
  return s->ready != NULL || (s->oldest != NULL && held_enough(s->oldest->ev.ts_ns, now_ns));
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
      resolve(s, ev, NULL);
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

uint64_t names_redefined(const names *s) { return s->redefined; }

uint64_t names_examined(const names *s) { return s->examined; }
