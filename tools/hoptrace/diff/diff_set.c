/* A recording's traces as `hoptrace diff` compares them (diff_set.h). */
#include "diff/diff_set.h"

#include <stdlib.h>
#include <string.h>

#include "output/report_groups.h"
#include "read/text_hash.h"
#include "util/grow.h"

void diff_keys_init(diff_keys *k) { memset(k, 0, sizeof(*k)); }

void diff_keys_free(diff_keys *k) {
  for (size_t i = 0; i < k->n_ops; i++)
    free(k->ops[i]);
  for (size_t i = 0; i < k->n; i++) {
    free(k->keys[i].service);
    free(k->keys[i].server);
    free(k->keys[i].name);
  }
  free(k->keys);
  free(k->slots);
  memset(k, 0, sizeof(*k));
}

static const char *nz(const char *s) { return s ? s : "?"; }

static uint64_t hash_of(uint32_t op, int phase, const char *svc, const char *srv,
                        const char *name) {
  uint64_t h = text_hash(svc, strlen(svc)) ^ ((uint64_t)op << 8 | (uint64_t)phase);
  h = (h ^ (srv ? text_hash(srv, strlen(srv)) : 1)) * 0x9e3779b97f4a7c15ull;
  return (h ^ text_hash(name, strlen(name))) * 0x9e3779b97f4a7c15ull;
}

static int same(const char *a, const char *b) {
  return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int slots_grow(diff_keys *k) {
  size_t cap = k->n_slots ? k->n_slots * 2 : 64;
  uint32_t *slots = calloc(cap, sizeof(*slots));
  if (slots == NULL)
    return -1;
  for (size_t i = 0; i < k->n; i++) {
    size_t at = (size_t)k->keys[i].hash & (cap - 1);
    while (slots[at] != 0)
      at = (at + 1) & (cap - 1);
    slots[at] = (uint32_t)i + 1;
  }
  free(k->slots);
  k->slots = slots;
  k->n_slots = cap;
  return 0;
}

/* The key's index; UINT32_MAX when it is new and cannot be kept. */
static uint32_t key_for(diff_keys *k, uint32_t op, int phase, const char *svc, const char *srv,
                        const char *name) {
  uint64_t h = hash_of(op, phase, svc, srv, name);
  size_t at = k->n_slots ? (size_t)h & (k->n_slots - 1) : 0;
  for (; k->n_slots && k->slots[at] != 0; at = (at + 1) & (k->n_slots - 1)) {
    const diff_key *x = &k->keys[k->slots[at] - 1];
    if (x->hash == h && x->op == op && x->phase == phase && strcmp(x->service, svc) == 0 &&
        same(x->server, srv) && strcmp(x->name, name) == 0)
      return k->slots[at] - 1;
  }
  if (k->n >= DIFF_KEYS || ((k->n + 1) * 2 > k->n_slots && slots_grow(k) != 0))
    return UINT32_MAX;
  if (ht_grow(&k->keys, &k->cap, k->n + 1, sizeof(diff_key), 32) != 0)
    return UINT32_MAX;
  diff_key *x = &k->keys[k->n];
  *x = (diff_key){op, phase, strdup(svc), srv ? strdup(srv) : NULL, strdup(name), h, 0, 0};
  if (x->service == NULL || x->name == NULL || (srv && x->server == NULL)) {
    free(x->service);
    free(x->server);
    free(x->name);
    return UINT32_MAX;
  }
  at = (size_t)h & (k->n_slots - 1);
  while (k->slots[at] != 0)
    at = (at + 1) & (k->n_slots - 1);
  k->slots[at] = (uint32_t)k->n + 1;
  return (uint32_t)k->n++;
}

static uint32_t op_for(diff_keys *k, const char *name) {
  for (size_t i = 0; i < k->n_ops; i++)
    if (strcmp(k->ops[i], name) == 0)
      return (uint32_t)i;
  if (k->n_ops == DIFF_OPS || (k->ops[k->n_ops] = strdup(name)) == NULL)
    return UINT32_MAX;
  return (uint32_t)k->n_ops++;
}

void diff_set_init(diff_set *s, diff_keys *keys) {
  memset(s, 0, sizeof(*s));
  s->keys = keys;
}

void diff_set_free(diff_set *s) {
  free(s->traces);
  free(s->cells);
  cp_scratch_free(&s->scratch);
  memset(s, 0, sizeof(*s));
}

typedef struct adding {
  diff_set *s;
  uint32_t op;
  size_t first;
  int failed;
} adding;

static void segment(void *user, const span *sp, const span *server, int phase, int64_t ns) {
  adding *a = user;
  diff_set *s = a->s;
  diff_keys *k = s->keys;
  const char *srv = server ? nz(server->service) : NULL;
  uint32_t key = key_for(k, a->op, phase, nz(sp->service), srv,
                         nz(server ? server->name : sp->name));
  if (key == UINT32_MAX) {
    a->failed = 1;
    return;
  }
  diff_key *x = &k->keys[key];
  if (x->last_trace == k->serial) {
    /* a key met twice in one trace far apart: its sum may pass int64 */
    s->cells[x->last_cell].ns = ns_sum(s->cells[x->last_cell].ns, ns);
    return;
  }
  if (s->n_cells + 1 > DIFF_CELLS ||
      ht_grow(&s->cells, &s->cap_cells, s->n_cells + 1, sizeof(diff_cell), 1024) != 0) {
    a->failed = 1;
    return;
  }
  x->last_trace = k->serial;
  x->last_cell = (uint32_t)s->n_cells;
  s->cells[s->n_cells++] = (diff_cell){key, ns};
}

int diff_set_add(diff_set *s, const trace *t) {
  const span *root = cp_root(t);
  int64_t d = root ? span_duration_ns(root) : 0;
  if (d <= 0) {
    s->no_root++;
    return 0;
  }
  adding a = {s, op_for(s->keys, nz(root->name)), s->n_cells, 0};
  if (a.op == UINT32_MAX || s->n >= DIFF_TRACES) {
    s->dropped++;
    return -1;
  }
  if (ht_grow(&s->traces, &s->cap, s->n + 1, sizeof(diff_trace), 1024) != 0) {
    s->dropped++;
    return -1;
  }
  s->keys->serial++;
  cp_visitor v = {NULL, segment, &a};
  if (cp_walk(t, &v, &s->stats, &s->scratch) != 0 || a.failed) {
    s->n_cells = a.first; /* a trace whole or not at all */
    s->dropped++;
    return -1;
  }
  double w = trace_weight(t);
  s->unknown_p += w == 0;
  s->traces[s->n++] = (diff_trace){a.op, (uint32_t)(s->n_cells - a.first), a.first, d,
                                   w == 0 ? 1 : w, t->trace_lo};
  return 0;
}
