/* `hoptrace report`'s aggregate critical path: per operation (a trace's
 * root span name), the share of end-to-end time each (service, operation,
 * phase) holds on the critical path (report_critical.h), over all traces
 * and over the slowest 1 %, each trace weighted by 1/p (of unknown p:
 * once). Shares are time-weighted: a key's critical-path ns over the
 * operation's end-to-end ns, so an operation's shares add up to 100 %.
 * Bounded: per key, its ns per duration class (1/16 of a power of two
 * wide), never per trace; the slowest 1 % are the classes from the top
 * down to the one holding the 99th percentile, that one counted in
 * proportion. At most CPAGG_OPS operations and CPAGG_KEYS keys, the rest
 * in one "(other)" key of their operation. */
#ifndef HT_TOOL_REPORT_CPAGG_H
#define HT_TOOL_REPORT_CPAGG_H

#include "assemble/model.h"
#include "output/obuf.h"
#include "output/report_critical.h"

#define CPAGG_OPS 256
#define CPAGG_KEYS 4096

typedef struct cp_agg cp_agg;

cp_agg *cp_agg_new(void);
void cp_agg_free(cp_agg *a);
/* Counts t; -1 when part of it could not be kept (out of memory: the
 * report says how many). */
int cp_agg_add(cp_agg *a, const trace *t);

/* One operation's rows, as the report prints them. */
typedef struct cp_row {
  const char *service, *server; /* server: request and reply, else NULL */
  const char *operation;
  int phase;
  double all_ns, tail_ns; /* weighted critical-path ns */
} cp_row;

typedef struct cp_op_summary {
  const char *name;
  uint64_t traces, unknown_p;
  double est, e2e_ns;            /* weighted traces and end-to-end ns */
  double tail_est, tail_e2e_ns;  /* the same over the slowest 1 % */
  int64_t tail_from_ns;          /* lower edge of the p99's class */
} cp_op_summary;

size_t cp_agg_ops(const cp_agg *a);
/* Operation i and its rows, largest share in the slowest 1 % first:
 * *rows allocated (the caller frees it), NULL with n 0 when out of
 * memory. */
void cp_agg_op(const cp_agg *a, size_t i, cp_op_summary *sum, cp_row **rows, size_t *n);

/* What was clamped, not followed or not kept, for the section's notes. */
typedef struct cp_agg_count {
  cp_stats stats;
  uint64_t no_root;  /* traces without a root of non-zero duration */
  uint64_t dropped;  /* samples not kept: out of memory or cells_max */
  unsigned cells_max;
} cp_agg_count;
void cp_agg_counts(const cp_agg *a, cp_agg_count *c);

/* The report's section, and its JSON object (report --format json):
 * report_cpagg_print.c. */
void cp_agg_print(const cp_agg *a, obuf *out);
void cp_agg_json(const cp_agg *a, obuf *out);

#endif
