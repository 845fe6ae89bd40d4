/* `hoptrace diff`'s figures: two groups of traces (two recordings, or one
 * split: its slowest 1 % against the rest, or its two halves by trace
 * id), per operation and per (hop, phase) of the critical path
 * (diff_set.h):
 *  - p50 and p99 of the phase's ns on the path, over the traces where it
 *    is on the path, each side's, weighted by 1/p; the change B - A with
 *    a 95 % percentile bootstrap interval (Poisson bootstrap over
 *    duration classes 1/32 of a power of two wide; `resamples` of them,
 *    seeded: the same input and seed give the same figures);
 *  - its contribution to the end-to-end change: the change of the phase's
 *    mean ns on the path per trace (0 where absent), which over an
 *    operation's rows adds up to the change of its mean end-to-end time;
 *  - significant: the change of p50 or p99 is beyond zero at 95 % for all
 *    rows together (Bonferroni over every row's two changes; p: the
 *    larger of the normal one with the bootstrap's standard error and
 *    twice the share of resamples across zero); a p50 with at least
 *    DIFF_MIN_SAMPLES traces a side, a p99 with GROUP_SMALL (below that
 *    it is about the maximum, whose bootstrap says little). */
#ifndef HT_TOOL_DIFF_STATS_H
#define HT_TOOL_DIFF_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "diff/diff_set.h"

#define DIFF_MIN_SAMPLES 10
#define DIFF_RESAMPLES_MAX 100000

/* Some traces of a set. */
typedef struct diff_view {
  const diff_set *set;
  uint32_t *idx;
  size_t n;
} diff_view;

/* Every trace; out of memory: -1. */
int diff_view_all(const diff_set *s, diff_view *v);
/* Per operation, its traces at or above the weighted quantile q of
 * end-to-end time (at least one) in *slow, the others in *rest. */
int diff_view_split_tail(const diff_set *s, double q, diff_view *rest, diff_view *slow);
/* By the trace id's lowest bit: an even and an odd half, which differ
 * only by chance. */
int diff_view_split_halves(const diff_set *s, diff_view *even, diff_view *odd);
void diff_view_free(diff_view *v);

typedef struct diff_est {
  double a, b, delta; /* ns */
  double lo, hi;      /* 95 % interval of delta */
  double p;           /* two-sided (above) */
} diff_est;

typedef struct diff_row {
  const diff_key *key; /* NULL: end to end */
  uint64_t n_a, n_b;   /* traces with it on the path */
  diff_est p50, p99;
  double contrib_ns, share; /* share of the op's mean end-to-end change */
  bool tested, tested_p99, significant; /* tested: its p50 */
} diff_row;

typedef struct diff_op {
  const char *name;
  uint64_t n_a, n_b;
  double w_a, w_b;
  diff_row e2e;
  double mean_a, mean_b; /* weighted mean end-to-end ns */
  diff_row *rows;        /* by contribution in the direction of the change */
  size_t n_rows;
} diff_op;

typedef struct diff_result {
  diff_op *ops; /* by added time: |mean change| x B's weight */
  size_t n_ops;
  unsigned resamples;
  uint64_t seed;
  size_t tests;          /* changes tested: the Bonferroni divisor */
  const diff_op *culprit_op; /* NULL: nothing significant */
  const diff_row *culprit;
} diff_result;

/* a against b. 0, or -1 out of memory (nothing to free then). */
int diff_compare(const diff_view *a, const diff_view *b, unsigned resamples, uint64_t seed,
                 diff_result *r);
void diff_result_free(diff_result *r);

#endif
