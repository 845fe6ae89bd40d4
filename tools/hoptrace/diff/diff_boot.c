/* The bootstrap behind `hoptrace diff` (diff_boot.h). */
#include "diff/diff_boot.h"

#include <math.h>
#include <stdlib.h>

int32_t boot_class(int64_t ns) {
  return ns <= 0 ? 0 : (int32_t)(log2((double)ns + 1) * BOOT_CLASS_PER_OCTAVE);
}

static double class_floor(int32_t c) { return exp2((double)c / BOOT_CLASS_PER_OCTAVE) - 1; }

double boot_quantile(const boot_bin *bins, size_t n, const double *mult, double q) {
  double total = 0;
  for (size_t i = 0; i < n; i++)
    total += bins[i].w * (mult ? mult[i] : 1);
  if (!(total > 0))
    return NAN;
  double target = q * total, cum = 0;
  for (size_t i = 0; i < n; i++) {
    double x = bins[i].w * (mult ? mult[i] : 1);
    if (x > 0 && cum + x >= target) {
      double lo = class_floor(bins[i].cls), hi = class_floor(bins[i].cls + 1);
      return lo + (target - cum) / x * (hi - lo);
    }
    cum += x;
  }
  return class_floor(bins[n - 1].cls + 1);
}

/* splitmix64: small, fast, and the same everywhere */
static uint64_t next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *s) { return (double)((next(s) >> 11) + 1) * 0x1.0p-53; }

/* Poisson(lambda): by multiplication when small, else its normal */
static double poisson(uint64_t *s, double lambda) {
  if (lambda < 30) {
    double limit = exp(-lambda), p = uniform(s);
    int k = 0;
    while (p > limit) {
      k++;
      p *= uniform(s);
    }
    return k;
  }
  double z = sqrt(-2 * log(uniform(s))) * cos(2 * M_PI * uniform(s));
  double k = round(lambda + sqrt(lambda) * z);
  return k > 0 ? k : 0;
}

static void redraw(const boot_bin *bins, size_t n, uint64_t *rng, double *mult) {
  for (size_t i = 0; i < n; i++)
    mult[i] = poisson(rng, bins[i].n) / bins[i].n;
}

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static void summarize(double *d, size_t k, diff_est *e) {
  e->delta = e->b - e->a;
  if (k == 0 || isnan(e->delta)) {
    e->lo = e->hi = NAN;
    e->p = 1;
    return;
  }
  qsort(d, k, sizeof(*d), by_value);
  size_t lo = (size_t)floor(0.025 * (double)k), hi = (size_t)ceil(0.975 * (double)k);
  e->lo = d[lo];
  e->hi = d[hi > 0 ? hi - 1 : 0];
  double mean = 0, var = 0;
  for (size_t i = 0; i < k; i++)
    mean += d[i] / (double)k;
  for (size_t i = 0; i < k; i++)
    var += (d[i] - mean) * (d[i] - mean) / (double)(k > 1 ? k - 1 : 1);
  double se = sqrt(var);
  double normal = se > 0 ? erfc(fabs(e->delta) / (se * M_SQRT2)) : e->delta != 0 ? 0 : 1;
  /* and the resamples across zero: a skewed bootstrap (a p99 near a
   * few outliers) makes the normal one too bold */
  size_t below = 0, above = 0;
  for (size_t i = 0; i < k; i++) {
    below += d[i] <= 0;
    above += d[i] >= 0;
  }
  double crossed = 2 * (double)(below < above ? below : above) / (double)k;
  e->p = fmin(1, fmax(normal, crossed));
}

static int scratch_fit(boot_scratch *s, size_t resamples, size_t bins) {
  if (s->cap < resamples) {
    double *d50 = realloc(s->d50, resamples * sizeof(double));
    if (d50 != NULL)
      s->d50 = d50;
    double *d99 = realloc(s->d99, resamples * sizeof(double));
    if (d99 != NULL)
      s->d99 = d99;
    if (d50 == NULL || d99 == NULL)
      return -1;
    s->cap = resamples;
  }
  if (s->cap_mult < bins) {
    double *m = realloc(s->mult, bins * sizeof(double));
    if (m == NULL)
      return -1;
    s->mult = m;
    s->cap_mult = bins;
  }
  return 0;
}

int boot_compare(const boot_pair *pair, unsigned resamples, uint64_t seed, boot_scratch *s,
                 diff_est *p50, diff_est *p99) {
  p50->a = boot_quantile(pair->a, pair->na, NULL, 0.5);
  p50->b = boot_quantile(pair->b, pair->nb, NULL, 0.5);
  p99->a = boot_quantile(pair->a, pair->na, NULL, 0.99);
  p99->b = boot_quantile(pair->b, pair->nb, NULL, 0.99);
  size_t k = 0;
  if (pair->na > 0 && pair->nb > 0) {
    if (scratch_fit(s, resamples, pair->na + pair->nb) != 0)
      return -1;
    double *ma = s->mult, *mb = s->mult + pair->na;
    uint64_t rng = seed;
    for (unsigned r = 0; r < resamples; r++) {
      redraw(pair->a, pair->na, &rng, ma);
      redraw(pair->b, pair->nb, &rng, mb);
      double a50 = boot_quantile(pair->a, pair->na, ma, 0.5);
      double b50 = boot_quantile(pair->b, pair->nb, mb, 0.5);
      double a99 = boot_quantile(pair->a, pair->na, ma, 0.99);
      double b99 = boot_quantile(pair->b, pair->nb, mb, 0.99);
      if (isnan(a50) || isnan(b50)) /* a side drew no sample */
        continue;
      s->d50[k] = b50 - a50;
      s->d99[k++] = b99 - a99;
    }
  }
  summarize(s->d50, k, p50);
  summarize(s->d99, k, p99);
  return 0;
}

void boot_scratch_free(boot_scratch *s) {
  free(s->d50);
  free(s->d99);
  free(s->mult);
  *s = (boot_scratch){0};
}
