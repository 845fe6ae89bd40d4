/* Adaptive thresholds (traced_adaptive.h). Each operation keeps six
 * 10-second windows of a log histogram (4 buckets an octave from 1 us,
 * counts to within 19 %); its p99.9 over the windows of the last minute
 * is recomputed at most once a second, by whichever span finds it stale.
 * A window is cleared by the first span that enters it anew. Counts are
 * relaxed atomics: a span counted into a window being cleared may be
 * lost, which a percentile over thousands does not feel.
 * Must never: lock, allocate, or cost more than a few dozen instructions
 * a span (the scan is once a second an operation). */
#include <stdatomic.h>
#include <string.h>

#include "messenger/traced_adaptive.h"

#define WINDOWS 6
#define WINDOW_NS 10000000000ull
#define BUCKETS 128
#define RECOMPUTE_NS 1000000000ull

typedef struct ad_op {
  _Atomic(const void *) key;
  _Atomic uint64_t window_of[WINDOWS]; /* which 10 s window each slot holds, + 1 */
  atomic_uint count[WINDOWS][BUCKETS];
  _Atomic uint64_t p999_ns;  /* 0: not enough spans */
  _Atomic uint64_t computed_at;
} ad_op;

static ad_op ops[HT_ADAPTIVE_OPS];

/* 0 below 1 us, else 1 + 4 * octave + the next two bits. */
static unsigned bucket_of(uint64_t ns) {
  uint64_t v = ns >> 10;
  if (v == 0)
    return 0;
  unsigned o = 63u - (unsigned)__builtin_clzll(v);
  unsigned sub = o >= 2 ? (unsigned)(v >> (o - 2)) & 3u : (unsigned)(v << (2 - o)) & 3u;
  unsigned b = 1 + 4 * o + sub;
  return b < BUCKETS ? b : BUCKETS - 1;
}

/* The bucket's upper bound in ns. */
static uint64_t bucket_top(unsigned b) {
  if (b == 0)
    return 1ull << 10;
  unsigned o = (b - 1) / 4, sub = (b - 1) % 4;
  return ((uint64_t)(5 + sub) << o >> 2) << 10;
}

static ad_op *op_of(const void *key) {
  uintptr_t h = ((uintptr_t)key >> 4) * 0x9e3779b97f4a7c15ull;
  for (unsigned i = 0; i < HT_ADAPTIVE_OPS; i++) {
    ad_op *o = &ops[(h + i) % HT_ADAPTIVE_OPS];
    const void *k = atomic_load_explicit(&o->key, memory_order_acquire);
    if (k == key)
      return o;
    if (k == NULL) {
      const void *none = NULL;
      if (atomic_compare_exchange_strong_explicit(&o->key, &none, key, memory_order_acq_rel,
                                                  memory_order_acquire) ||
          none == key)
        return o;
    }
  }
  return NULL;
}

static void recompute(ad_op *o, uint64_t window) {
  uint64_t sum[BUCKETS] = {0}, total = 0;
  for (unsigned w = 0; w < WINDOWS; w++) {
    uint64_t of = atomic_load_explicit(&o->window_of[w], memory_order_relaxed);
    if (of == 0 || of - 1 + WINDOWS <= window)
      continue; /* empty, or older than the minute */
    for (unsigned b = 0; b < BUCKETS; b++) {
      uint64_t c = atomic_load_explicit(&o->count[w][b], memory_order_relaxed);
      sum[b] += c;
      total += c;
    }
  }
  uint64_t p = 0;
  if (total >= HT_ADAPTIVE_MIN_SPANS) {
    uint64_t want = total - total / 1000, run = 0; /* 99.9 % at or below */
    for (unsigned b = 0; b < BUCKETS && p == 0; b++)
      if ((run += sum[b]) >= want)
        p = bucket_top(b);
  }
  atomic_store_explicit(&o->p999_ns, p, memory_order_relaxed);
}

bool ht_shim_adaptive_slow(const void *key, uint64_t took_ns, uint64_t now_ns,
                           uint64_t *threshold) {
  ad_op *o = key != NULL ? op_of(key) : NULL;
  if (o == NULL)
    return false;
  uint64_t window = now_ns / WINDOW_NS;
  unsigned w = (unsigned)(window % WINDOWS);
  uint64_t of = atomic_load_explicit(&o->window_of[w], memory_order_relaxed);
  if (of != window + 1 &&
      atomic_compare_exchange_strong_explicit(&o->window_of[w], &of, window + 1,
                                              memory_order_relaxed, memory_order_relaxed))
    for (unsigned b = 0; b < BUCKETS; b++)
      atomic_store_explicit(&o->count[w][b], 0, memory_order_relaxed);
  atomic_fetch_add_explicit(&o->count[w][bucket_of(took_ns)], 1, memory_order_relaxed);
  uint64_t at = atomic_load_explicit(&o->computed_at, memory_order_relaxed);
  if (now_ns - at >= RECOMPUTE_NS &&
      atomic_compare_exchange_strong_explicit(&o->computed_at, &at, now_ns,
                                              memory_order_relaxed, memory_order_relaxed))
    recompute(o, window);
  uint64_t p = atomic_load_explicit(&o->p999_ns, memory_order_relaxed);
  *threshold = p;
  return p != 0 && took_ns > p;
}

void ht_shim_adaptive_reset(void) {
  for (unsigned i = 0; i < HT_ADAPTIVE_OPS; i++) {
    ad_op *o = &ops[i];
    for (unsigned w = 0; w < WINDOWS; w++)
      atomic_store_explicit(&o->window_of[w], 0, memory_order_relaxed);
    atomic_store_explicit(&o->p999_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&o->computed_at, 0, memory_order_relaxed);
  }
}
