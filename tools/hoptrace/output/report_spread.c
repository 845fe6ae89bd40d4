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

/* Where bin i starts: in unsigned arithmetic, as base + i * width of a
 * bin in use is a time (an int64) while i * width alone may not be. */
static int64_t bin_start(const report_spread *s, size_t i) {
  return (int64_t)((uint64_t)s->base + (uint64_t)i * (uint64_t)s->width);
}

/* Doubles the width until the bins in use and t fit; every old bin lies
 * in one new bin, as both bases are multiples of the old width. */
static void widen(report_spread *s, int64_t t) {
  int64_t lo = t, hi = t;
  for (size_t i = 0; i < SPREAD_BINS; i++)
    if (s->bins[i].n != 0) {
      int64_t at = bin_start(s, i);
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
    bin *b = &s->bins[bin_of(bin_start(s, i), base, w)];
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

/* The slice of [first, first + span] holding t (clamped into it). */
static uint64_t slice_of(int64_t t, int64_t first, uint64_t span) {
  if (t <= first || span == 0)
    return 0;
  uint64_t k = (uint64_t)((unsigned __int128)((uint64_t)t - (uint64_t)first) * SPREAD_SLICES /
                          span);
  return k < SPREAD_SLICES ? k : SPREAD_SLICES - 1;
}

void report_spread_print(const report_spread *s, obuf *out, int64_t first_ns, int64_t last_ns) {
  uint64_t total = 0;
  bin slice[SPREAD_SLICES] = {{0, 0, 0}};
  /* the window in equal slices; a bin counts whole in the slice holding
   * its middle, so a slice's edges are good to one bin */
  /* unsigned: hostile times may lie anywhere in int64, their span past it */
  uint64_t span = last_ns > first_ns ? (uint64_t)last_ns - (uint64_t)first_ns : 0;
  for (size_t i = 0; i < SPREAD_BINS; i++) {
    const bin *b = &s->bins[i];
    if (b->n == 0)
      continue;
    total += b->n;
    /* the bin holds a time, so its start fits; its middle may not */
    int64_t at = bin_start(s, i);
    int64_t mid = at > INT64_MAX - s->width / 2 ? INT64_MAX : at + s->width / 2;
    bin *to = &slice[slice_of(mid, first_ns, span)];
    to->n += b->n;
    to->unknown += b->unknown;
    to->est += b->est;
  }
  if (total == 0)
    return;
  int slices = span > 0 ? SPREAD_SLICES : 1;
  ob_printf(out, "  time spread: traces by their first span's start, the window in %d equal"
                 " slices of %.6f s (each trace counted in %.6f s bins: a slice's edges are good"
                 " to one bin; recorded/est.: of the traces of known p, the fraction sampled; it"
                 " changes when sampling did)\n", slices, (double)span / slices / 1e9,
            (double)s->width / 1e9);
  ob_printf(out, "    %12s %10s %7s %14s %14s\n", "from (s)", "traces", "share", "est. issued",
            "recorded/est.");
  for (int k = 0; k < slices; k++)
    print_slice(out, &slice[k], total,
                (int64_t)((unsigned __int128)(uint64_t)span * (uint64_t)k / SPREAD_SLICES));
}
