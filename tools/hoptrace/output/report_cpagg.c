/* The aggregate critical path (report_cpagg.h). */
#include "output/report_cpagg.h"

#include <stdlib.h>
#include <string.h>

#include "output/report_critical.h"
#include "output/report_groups.h"
#include "read/text_hash.h"
#include "util/grow.h"

#define CLASS_SUB_BITS 4 /* 16 classes a power of two: ~4.4 % wide */
#define CLASSES (64 << CLASS_SUB_BITS)
#define CELLS_MAX (1u << 20) /* 16 MiB of cells at most, 32 MiB of slots */
#define TAIL 0.01

enum { CELL_KEY = 1, CELL_OP_W, CELL_OP_E2E };

typedef struct op {
  char *name;
  uint64_t traces, unknown_p;
  double w, e2e;
  uint32_t other; /* its "(other)" key */
} op;

typedef struct key {
  uint32_t op;
  uint8_t phase;
  char *service, *server, *name;
  double ns;
  uint64_t hash;
} key;

typedef struct cell {
  uint64_t code; /* 0: empty */
  double v;
} cell;

struct cp_agg {
  op *ops;
  size_t n_ops;
  key *keys;
  size_t n_keys, cap_keys;
  uint32_t *key_slots; /* key index + 1; 0 empty */
  size_t n_key_slots;
  cell *cells;
  size_t n_cells, cap_cells;
  cp_stats stats;
  uint64_t dropped; /* samples not kept: out of memory or CELLS_MAX */
  uint64_t no_root; /* traces with no span or a zero-length root */
  cp_scratch scratch;
  /* the trace being added */
  uint32_t cur_op;
  int cur_class;
  double cur_w;
};

static int class_of(int64_t ns) {
  if (ns < (1 << CLASS_SUB_BITS))
    return ns < 0 ? 0 : (int)ns;
  int msb = 63 - __builtin_clzll((unsigned long long)ns);
  int sub = (int)((uint64_t)ns >> (msb - CLASS_SUB_BITS)) & ((1 << CLASS_SUB_BITS) - 1);
  return ((msb - CLASS_SUB_BITS + 1) << CLASS_SUB_BITS) + sub;
}

static int64_t class_floor(int c) {
  if (c < (1 << CLASS_SUB_BITS))
    return c;
  int msb = (c >> CLASS_SUB_BITS) + CLASS_SUB_BITS - 1;
  int64_t sub = c & ((1 << CLASS_SUB_BITS) - 1);
  return (int64_t)(((uint64_t)1 << msb) | ((uint64_t)sub << (msb - CLASS_SUB_BITS)));
}

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

static uint64_t code_of(int kind, uint32_t id, int c) {
  return ((uint64_t)kind << 60) | ((uint64_t)id << 16) | (uint64_t)c;
}

static cell *cell_find(const cp_agg *a, uint64_t code) {
  if (a->cap_cells == 0)
    return NULL;
  for (size_t i = mix(code) & (a->cap_cells - 1);; i = (i + 1) & (a->cap_cells - 1)) {
    if (a->cells[i].code == code || a->cells[i].code == 0)
      return &a->cells[i];
  }
}

static double cell_get(const cp_agg *a, int kind, uint32_t id, int c) {
  const cell *x = cell_find(a, code_of(kind, id, c));
  return x != NULL && x->code != 0 ? x->v : 0;
}

static int cells_grow(cp_agg *a) {
  size_t cap = a->cap_cells ? a->cap_cells * 2 : 1024;
  cell *old = a->cells, *grown = calloc(cap, sizeof(cell));
  if (grown == NULL)
    return -1;
  size_t old_cap = a->cap_cells;
  a->cells = grown;
  a->cap_cells = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].code != 0)
      *cell_find(a, old[i].code) = old[i];
  free(old);
  return 0;
}

static void cell_add(cp_agg *a, int kind, uint32_t id, int c, double v) {
  uint64_t code = code_of(kind, id, c);
  cell *x = cell_find(a, code);
  if (x == NULL || x->code == 0) {
    if (a->n_cells >= CELLS_MAX ||
        ((a->n_cells + 1) * 2 > a->cap_cells && cells_grow(a) != 0)) {
      a->dropped++;
      return;
    }
    x = cell_find(a, code);
    x->code = code;
    x->v = 0;
    a->n_cells++;
  }
  x->v += v;
}

static const char *nz(const char *s) { return s ? s : "?"; }

static uint64_t key_hash(uint32_t o, int phase, const char *svc, const char *srv, const char *name) {
  uint64_t h = mix(((uint64_t)o << 8) | (uint64_t)phase);
  h ^= text_hash(svc, strlen(svc));
  h = mix(h) ^ (srv ? text_hash(srv, strlen(srv)) : 1);
  return mix(h) ^ text_hash(name, strlen(name));
}

static int same(const char *a, const char *b) {
  return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int key_slots_grow(cp_agg *a) {
  size_t cap = a->n_key_slots ? a->n_key_slots * 2 : 64;
  uint32_t *slots = calloc(cap, sizeof(*slots));
  if (slots == NULL)
    return -1;
  for (size_t k = 0; k < a->n_keys; k++) {
    size_t i = a->keys[k].hash & (cap - 1);
    while (slots[i] != 0)
      i = (i + 1) & (cap - 1);
    slots[i] = (uint32_t)k + 1;
  }
  free(a->key_slots);
  a->key_slots = slots;
  a->n_key_slots = cap;
  return 0;
}

/* A new key; UINT32_MAX when out of memory. */
static uint32_t key_new(cp_agg *a, uint32_t o, int phase, const char *svc, const char *srv,
                        const char *name, uint64_t h) {
  if ((a->n_keys + 1) * 2 > a->n_key_slots && key_slots_grow(a) != 0)
    return UINT32_MAX;
  if (ht_grow(&a->keys, &a->cap_keys, a->n_keys + 1, sizeof(key), 32) != 0)
    return UINT32_MAX;
  key *k = &a->keys[a->n_keys];
  *k = (key){o, (uint8_t)phase, strdup(svc), srv ? strdup(srv) : NULL, strdup(name), 0, h};
  if (k->service == NULL || k->name == NULL || (srv && k->server == NULL)) {
    free(k->service);
    free(k->server);
    free(k->name);
    return UINT32_MAX;
  }
  size_t i = h & (a->n_key_slots - 1);
  while (a->key_slots[i] != 0)
    i = (i + 1) & (a->n_key_slots - 1);
  a->key_slots[i] = (uint32_t)a->n_keys + 1;
  return (uint32_t)a->n_keys++;
}

static uint32_t key_for(cp_agg *a, uint32_t o, int phase, const char *svc, const char *srv,
                        const char *name) {
  uint64_t h = key_hash(o, phase, svc, srv, name);
  for (size_t i = a->n_key_slots ? h & (a->n_key_slots - 1) : 0;
       a->n_key_slots && a->key_slots[i] != 0; i = (i + 1) & (a->n_key_slots - 1)) {
    const key *k = &a->keys[a->key_slots[i] - 1];
    if (k->hash == h && k->op == o && k->phase == phase && strcmp(k->service, svc) == 0 &&
        same(k->server, srv) && strcmp(k->name, name) == 0)
      return a->key_slots[i] - 1;
  }
  if (a->n_keys >= CPAGG_KEYS + CPAGG_OPS + 1)
    return a->ops[o].other;
  return key_new(a, o, phase, svc, srv, name, h);
}

static uint32_t op_for(cp_agg *a, const char *name) {
  for (size_t i = 0; i < a->n_ops; i++)
    if (strcmp(a->ops[i].name, name) == 0)
      return (uint32_t)i;
  if (a->n_ops == CPAGG_OPS + 1) /* the last one is "(other)" */
    return CPAGG_OPS;
  if (a->n_ops == CPAGG_OPS)
    name = "(other)";
  char *copy = strdup(name);
  if (copy == NULL)
    return UINT32_MAX;
  uint32_t o = (uint32_t)a->n_ops;
  a->ops[o] = (op){.name = copy};
  a->n_ops++;
  uint32_t other = key_new(a, o, CP_SERVICE, "(other)", NULL, "(other)", 0);
  if (other == UINT32_MAX) {
    free(copy);
    a->n_ops--;
    return UINT32_MAX;
  }
  a->ops[o].other = other;
  return o;
}

static void segment(void *user, const span *s, const span *server, int phase, int64_t ns) {
  cp_agg *a = user;
  const char *svc = nz(s->service), *srv = server ? nz(server->service) : NULL;
  uint32_t k = key_for(a, a->cur_op, phase, svc, srv, nz(server ? server->name : s->name));
  if (k == UINT32_MAX) {
    a->dropped++;
    return;
  }
  double v = a->cur_w * (double)ns;
  a->keys[k].ns += v;
  cell_add(a, CELL_KEY, k, a->cur_class, v);
}

cp_agg *cp_agg_new(void) {
  cp_agg *a = calloc(1, sizeof(*a));
  if (a != NULL && (a->ops = calloc(CPAGG_OPS + 1, sizeof(op))) == NULL) {
    free(a);
    return NULL;
  }
  return a;
}

void cp_agg_free(cp_agg *a) {
  if (a == NULL)
    return;
  for (size_t i = 0; i < a->n_ops; i++)
    free(a->ops[i].name);
  for (size_t i = 0; i < a->n_keys; i++) {
    free(a->keys[i].service);
    free(a->keys[i].server);
    free(a->keys[i].name);
  }
  free(a->ops);
  free(a->keys);
  free(a->key_slots);
  free(a->cells);
  cp_scratch_free(&a->scratch);
  free(a);
}

int cp_agg_add(cp_agg *a, const trace *t) {
  const span *root = cp_root(t);
  int64_t d = root ? span_duration_ns(root) : 0;
  if (d <= 0) {
    a->no_root++;
    return 0;
  }
  uint64_t dropped = a->dropped;
  uint32_t o = op_for(a, nz(root->name));
  if (o == UINT32_MAX) {
    a->dropped++;
    return -1;
  }
  double w = trace_weight(t);
  op *p = &a->ops[o];
  p->traces++;
  p->unknown_p += w == 0;
  w = w == 0 ? 1 : w; /* of unknown p: once */
  a->cur_op = o;
  a->cur_w = w;
  a->cur_class = class_of(d);
  cp_visitor v = {NULL, segment, a};
  if (cp_walk(t, &v, &a->stats, &a->scratch) != 0) {
    p->traces--;
    a->dropped++;
    return -1;
  }
  p->w += w;
  p->e2e += w * (double)d;
  cell_add(a, CELL_OP_W, o, a->cur_class, w);
  cell_add(a, CELL_OP_E2E, o, a->cur_class, w * (double)d);
  return a->dropped != dropped ? -1 : 0;
}

size_t cp_agg_ops(const cp_agg *a) { return a->n_ops; }

/* The slowest 1 %: every class above *boundary, and *frac of it. */
static void tail_classes(const cp_agg *a, uint32_t o, int *boundary, double *frac) {
  double want = a->ops[o].w * TAIL, above = 0;
  *boundary = 0;
  *frac = 1;
  for (int c = CLASSES - 1; c >= 0; c--) {
    double w = cell_get(a, CELL_OP_W, o, c);
    if (w > 0 && above + w >= want) {
      *boundary = c;
      *frac = (want - above) / w;
      return;
    }
    above += w;
  }
}

static double tail_sum(const cp_agg *a, int kind, uint32_t id, int boundary, double frac) {
  double sum = frac * cell_get(a, kind, id, boundary);
  for (int c = boundary + 1; c < CLASSES; c++)
    sum += cell_get(a, kind, id, c);
  return sum;
}

static int by_tail(const void *x, const void *y) {
  const cp_row *a = x, *b = y;
  if (a->tail_ns != b->tail_ns)
    return a->tail_ns > b->tail_ns ? -1 : 1;
  return (a->all_ns < b->all_ns) - (a->all_ns > b->all_ns);
}

void cp_agg_op(const cp_agg *a, size_t i, cp_op_summary *sum, cp_row **rows, size_t *n) {
  uint32_t o = (uint32_t)i;
  const op *p = &a->ops[o];
  int boundary;
  double frac;
  tail_classes(a, o, &boundary, &frac);
  *sum = (cp_op_summary){p->name, p->traces, p->unknown_p, p->w, p->e2e,
                         tail_sum(a, CELL_OP_W, o, boundary, frac),
                         tail_sum(a, CELL_OP_E2E, o, boundary, frac), class_floor(boundary)};
  size_t count = 0;
  for (size_t k = 0; k < a->n_keys; k++)
    count += a->keys[k].op == o && a->keys[k].ns > 0;
  *n = 0;
  *rows = count ? malloc(count * sizeof(cp_row)) : NULL;
  if (*rows == NULL)
    return;
  for (size_t k = 0; k < a->n_keys; k++) {
    const key *x = &a->keys[k];
    if (x->op != o || x->ns <= 0)
      continue;
    (*rows)[(*n)++] = (cp_row){x->service, x->server, x->name, x->phase, x->ns,
                               tail_sum(a, CELL_KEY, (uint32_t)k, boundary, frac)};
  }
  qsort(*rows, *n, sizeof(cp_row), by_tail);
}

void cp_agg_counts(const cp_agg *a, cp_agg_count *c) {
  *c = (cp_agg_count){a->stats, a->no_root, a->dropped, CELLS_MAX};
}
