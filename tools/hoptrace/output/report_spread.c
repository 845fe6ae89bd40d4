/* The traces' spread over the report's window (report_spread.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/report_groups.h"
#include "output/report_spread.h"

typedef struct bin {
  uint64_t n, unknown;
  double est;
} bin;

struct report_spread {
  bin bins[SPREAD_BINS];
  int64_t base, width; /* bin i: [base + i * width, + width); width 0: none yet */
};

report_spread *report_spread_new(void) { return calloc(1, sizeof(report_spread)); }

void report_spread_free(report_spread *s) { free(s); }

/* The multiple of w at or below t (w > 0), also for negative t. */
static int64_t floor_to(int64_t t, int64_t w) {
  int64_t r = t % w;
  return r < 0 ? t - r - w : t - r;
}

/* Which bin t falls in from base, in unsigned arithmetic: t and base may
 * be any int64 times; SPREAD_BINS or more when outside. */
static uint64_t bin_of(int64_t t, int64_t base, int64_t width) {
  return t < base ? UINT64_MAX : ((uint64_t)t - (uint64_t)base) / (uint64_t)width;
}

/* Doubles the width until the bins in use and t fit; every old bin lies
 * in one new bin, as both bases are multiples of the old width. */
static void widen(report_spread *s, int64_t t) {
  int64_t lo = t, hi = t;
  for (size_t i = 0; i < SPREAD_BINS; i++)
    if (s->bins[i].n != 0) {
      int64_t at = s->base + (int64_t)i * s->width;
      lo = at < lo ? at : lo;
      hi = at > hi ? at : hi;
    }
  int64_t w = s->width, base;
  do {
    w *= 2;
    base = floor_to(lo, w);
  } while (bin_of(hi, base, w) >= SPREAD_BINS);
  bin old[SPREAD_BINS];
  memcpy(old, s->bins, sizeof(old));
  memset(s->bins, 0, sizeof(s->bins));
  for (size_t i = 0; i < SPREAD_BINS; i++) {
    if (old[i].n == 0)
      continue;
    bin *b = &s->bins[bin_of(s->base + (int64_t)i * s->width, base, w)];
    b->n += old[i].n;
    b->unknown += old[i].unknown;
    b->est += old[i].est;
  }
  s->base = base;
  s->width = w;
}

void report_spread_add(report_spread *s, int64_t start_ns, double w) {
  if (s->width == 0) {
    s->width = 1;
    s->base = start_ns;
  }
  if (bin_of(start_ns, s->base, s->width) >= SPREAD_BINS)
    widen(s, start_ns);
  bin *b = &s->bins[bin_of(start_ns, s->base, s->width)];
  b->n++;
  b->unknown += w == 0;
  b->est += w;
}

static void print_slice(obuf *out, const bin *b, uint64_t total, int64_t offset_ns) {
  char est[48], ratio[16] = "-";
  report_estimate(est, sizeof(est), b->est, b->n, b->unknown);
  if (b->est > 0)
    snprintf(ratio, sizeof(ratio), "%.3g", (double)(b->n - b->unknown) / b->est);
  ob_printf(out, "    %+12.6f %10" PRIu64 " %6.1f%% %14s %14s\n", (double)offset_ns / 1e9, b->n,
            100.0 * (double)b->n / (double)total, est, ratio);
}

void report_spread_print(const report_spread *s, obuf *out, int64_t first_ns, int64_t last_ns) {
  uint64_t total = 0;
  size_t lo = SPREAD_BINS;
  for (size_t i = 0; i < SPREAD_BINS; i++)
    if (s->bins[i].n != 0) {
      total += s->bins[i].n;
      lo = lo == SPREAD_BINS ? i : lo;
    }
  if (total == 0)
    return;
  /* Slices of m whole bins from the first in use to the window's end. */
  int64_t from = s->base + (int64_t)lo * s->width;
  uint64_t bins = last_ns > from ? bin_of(last_ns, from, s->width) + 1 : 1;
  uint64_t m = (bins + SPREAD_SLICES - 1) / SPREAD_SLICES;
  double slice_s = (double)m * (double)s->width / 1e9;
  ob_printf(out, "  time spread: traces by their first span's start, the window in slices of"
                 " %.6f s (recorded/est.: of the traces of known p, the fraction sampled; it"
                 " changes when sampling did)\n", slice_s);
  ob_printf(out, "    %12s %10s %7s %14s %14s\n", "from (s)", "traces", "share", "est. issued",
            "recorded/est.");
  for (uint64_t k = 0; k * m < bins; k++) {
    bin sum = {0, 0, 0};
    for (uint64_t i = lo + k * m; i < lo + (k + 1) * m && i < SPREAD_BINS; i++) {
      sum.n += s->bins[i].n;
      sum.unknown += s->bins[i].unknown;
      sum.est += s->bins[i].est;
    }
    int64_t at = from + (int64_t)(k * m) * s->width - first_ns;
    print_slice(out, &sum, total, at > 0 ? at : 0); /* the first starts with the window */
  }
}
