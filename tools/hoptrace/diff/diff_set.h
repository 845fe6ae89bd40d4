/* What `hoptrace diff` keeps of a recording: per trace, its operation
 * (root span name), end-to-end time, weight (1/p; 1 when p is unknown)
 * and the ns each (operation, hop, phase) holds on its critical path
 * (output/report_critical.h: the report's own phases). Keys are shared by
 * the recordings compared (one diff_keys), so a key means the same in
 * each. Bounded: at most DIFF_OPS operations, DIFF_KEYS keys, DIFF_TRACES
 * traces and DIFF_CELLS (key, ns) cells a recording; a trace that does not
 * fit is counted, never kept (comparing then takes about as much again). */
#ifndef HT_TOOL_DIFF_SET_H
#define HT_TOOL_DIFF_SET_H

#include <stddef.h>
#include <stdint.h>

#include "assemble/model.h"
#include "output/report_critical.h"

#define DIFF_KEYS 4096
#define DIFF_OPS 256
#define DIFF_CELLS ((size_t)1 << 23) /* 128 MiB of cells at most */
#define DIFF_TRACES ((size_t)1 << 22) /* 160 MiB of traces at most */

typedef struct diff_key {
  uint32_t op;
  int phase;
  char *service, *server, *name; /* server: request and reply, else NULL */
  uint64_t hash;
  /* the trace being added: where its cell is (DIFF_CELLS fits 32 bits) */
  uint64_t last_trace;
  uint32_t last_cell;
} diff_key;

typedef struct diff_keys {
  char *ops[DIFF_OPS];
  size_t n_ops;
  diff_key *keys;
  size_t n, cap;
  uint32_t *slots; /* key index + 1; 0 empty */
  size_t n_slots;
  uint64_t serial; /* traces added to any set: a key's last_trace */
} diff_keys;

typedef struct diff_cell {
  uint32_t key;
  int64_t ns;
} diff_cell;

typedef struct diff_trace {
  uint32_t op;
  uint32_t n_cells;
  size_t first_cell;
  int64_t e2e_ns;
  double w;
  uint64_t id_lo; /* the trace id's low 64 bits: --split halves */
} diff_trace;

typedef struct diff_set {
  diff_keys *keys; /* the caller's */
  diff_trace *traces;
  size_t n, cap;
  diff_cell *cells;
  size_t n_cells, cap_cells;
  uint64_t no_root;        /* traces without a root of non-zero duration */
  uint64_t dropped;        /* traces not kept: out of memory or a bound */
  uint64_t unknown_p;      /* traces counted once: no sampling probability */
  cp_stats stats;
  cp_scratch scratch;
} diff_set;

void diff_keys_init(diff_keys *k);
void diff_keys_free(diff_keys *k);

void diff_set_init(diff_set *s, diff_keys *keys);
void diff_set_free(diff_set *s);
/* Counts t; -1 when it could not be kept (counted in dropped). */
int diff_set_add(diff_set *s, const trace *t);

#endif
