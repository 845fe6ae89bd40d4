/* The bootstrap behind `hoptrace diff` (diff_stats.h): two weighted
 * samples as duration classes, their p50 and p99 and the change of each
 * with a 95 % interval. A resample redraws each class's count from a
 * Poisson of its count (the Poisson bootstrap, summed over a class), so
 * its cost is the classes', not the samples'. Deterministic: a seed gives
 * the same resamples. */
#ifndef HT_TOOL_DIFF_BOOT_H
#define HT_TOOL_DIFF_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "diff/diff_stats.h"

#define BOOT_CLASS_PER_OCTAVE 32 /* about 2.2 % wide */

typedef struct boot_bin {
  int32_t cls;
  double w;   /* weight of its samples */
  uint32_t n; /* its samples */
} boot_bin;

typedef struct boot_pair {
  const boot_bin *a;
  size_t na;
  const boot_bin *b;
  size_t nb;
} boot_pair;

typedef struct boot_scratch {
  double *d50, *d99, *mult;
  size_t cap, cap_mult;
} boot_scratch;

int32_t boot_class(int64_t ns);
/* The weighted quantile q of bins sorted by class, linear inside a class;
 * mult (NULL: 1 each) scales each bin's weight. NAN when empty. */
double boot_quantile(const boot_bin *bins, size_t n, const double *mult, double q);
/* Fills p50 and p99 (a, b, delta, interval, p). 0, or -1 out of memory. */
int boot_compare(const boot_pair *pair, unsigned resamples, uint64_t seed, boot_scratch *s,
                 diff_est *p50, diff_est *p99);
void boot_scratch_free(boot_scratch *s);

#endif
