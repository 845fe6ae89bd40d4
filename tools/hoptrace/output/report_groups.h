/* `hoptrace report`'s roll-ups: what the report is built from (the time
 * window its spans cover, the traces recorded and the sampling
 * probability each root recorded), per operation (a trace's root span)
 * and per server (server spans): raw sampled counts beside counts and
 * rates estimated by weighting each trace by 1/p. A trace whose root
 * recorded no probability is never weighted: a count it is part of is a
 * lower bound (">=N", each such trace once), or "unknown" when no p is
 * known; "Built from" also spreads the traces over the window
 * (report_spread.h). Bounded: at most GROUPS_MAX rows a table, the rest in one
 * "(other)" row; a latency_hist per row. */
#ifndef HT_TOOL_REPORT_GROUPS_H
#define HT_TOOL_REPORT_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "assemble/model.h"
#include "output/latency_hist.h"
#include "output/obuf.h"

#define GROUPS_MAX 256
/* Fewer samples than this: p99 is the max, and the row says so. */
#define GROUP_SMALL 100

typedef struct report_groups report_groups;

report_groups *report_groups_new(void);
void report_groups_free(report_groups *g);
/* Counts t; -1 when a sample could not be kept (out of memory). */
int report_groups_add(report_groups *g, const trace *t);
/* "Built from": window, traces, sampling probabilities, estimated issued.
 * aligned: clocks of several hosts were put on one (Clock alignment). */
void report_groups_print_source(const report_groups *g, obuf *out, int aligned);
/* "Per operation" (named by the root span, its service a column) and
 * "Per server", rows by time summed 1/p each, largest first. */
void report_groups_print_rollups(const report_groups *g, obuf *out);

/* The mark printed after a row of fewer than GROUP_SMALL samples ("" for
 * others); said once in the legend. */
const char *group_small_mark(uint64_t count);
/* A UTC time, ns since the epoch, as 2026-01-02T03:04:05.123456Z into
 * buf (40 bytes). */
void report_utc(int64_t ns, char *buf, size_t cap);
/* The time of s's first annotation `name`, else its start (end when
 * at_end). */
int64_t report_mark(const span *s, const char *name, int at_end);
/* A count of n samples estimated by 1/p into buf: est (the sum of 1/p
 * over the samples of known p), ">=N" (est + each of the `unknown`
 * samples once: a lower bound) when some p are unknown, "unknown" when
 * all are (n > 0). */
void report_estimate(char *buf, size_t cap, double est, uint64_t n, uint64_t unknown);
/* 1/p of a trace's recorded probability; 0 when unknown. */
double trace_weight(const trace *t);

#endif
