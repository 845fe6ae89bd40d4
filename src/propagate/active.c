/* The process-wide sampling configuration and its counters.
 *
 * Deciding threads read an atomic pointer inside an epoch read section
 * (no lock); ht_sampling_set swaps in a new sampler under a writer mutex,
 * waits for readers of the old one to leave, then frees it. Samplers
 * that need no clock and no state (always, never, ratio, parent) are
 * also published as two plain words under a sequence counter, so their
 * decisions take no epoch section (a full barrier) and no calls.
 * Must never: lock or allocate on a decision, or free a sampler a reader
 * may still hold.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "hoptrace/context.h"
#include "hoptrace/error.h"
#include "propagate/active.h"
#include "propagate/epoch.h"
#include "propagate/sampler_impl.h"

static _Atomic(ht_sampler *) active;
/* The configuration from the environment lives here, not on the heap,
 * so first use cannot fail. */
static ht_sampler initial;
static pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* A fork while another thread held the writer lock must not leave the
 * child unable to change its sampler. */
static void writer_reset_in_child(void) {
  pthread_mutex_init(&writer, NULL);
}

static void register_writer_atfork(void) {
  (void)pthread_atfork(NULL, NULL, writer_reset_in_child);
}

static void lock_writer(void) {
  pthread_once(&atfork_once, register_writer_atfork);
  pthread_mutex_lock(&writer);
}

/* "started" and "received" are sums (sampled + dropped): one atomic add
 * per decision instead of two. */
enum {
  C_SAMPLED, C_DROPPED, C_REMOTE_SAMPLED, C_REMOTE_DROPPED, C_DEBUG_FORCED,
  C_DEBUG_HONOURED, C_DEBUG_REFUSED, C_CONFIG_CHANGES, C_COUNT
};
/* One cache line per counter: a client's loop thread counts roots while
 * a server's counts remote decisions, and sharing a line would bounce it
 * between their cores on every request. */
static struct {
  _Alignas(64) _Atomic uint64_t v;
} counters[C_COUNT];

static void count(int which) {
  atomic_fetch_add_explicit(&counters[which].v, 1, memory_order_relaxed);
}

/* --- the clock-free fast path */

enum { FAST_SLOW = 0, FAST_NEVER, FAST_ALWAYS, FAST_RATIO, FAST_PARENT };

static _Atomic uint64_t fast_seq;       /* odd while being written */
static _Atomic uint32_t fast_modes;     /* root mode | remote mode << 8 */
static _Atomic uint64_t fast_threshold; /* RATIO: sample when hash < it */

static unsigned fast_mode_of(const ht_sampler *s, ht_sampler_kind kind) {
  switch (kind) {
  case HT_SAMPLER_ALWAYS: return FAST_ALWAYS;
  case HT_SAMPLER_NEVER: return FAST_NEVER;
  case HT_SAMPLER_RATIO: return s->ratio_all ? FAST_ALWAYS : FAST_RATIO;
  default: return FAST_SLOW; /* RATE: a bucket and a clock */
  }
}

/* Writer lock held: what ht_sampler_root_ex/remote_ex would decide
 * (default hint, no remote DEBUG) for s, as two words. */
static void publish_fast(const ht_sampler *s) {
  ht_sampler_kind root = s->cfg.kind == HT_SAMPLER_PARENT ? s->cfg.root_kind
                                                          : s->cfg.kind;
  unsigned root_mode = root == HT_SAMPLER_PARENT ? FAST_NEVER : fast_mode_of(s, root);
  unsigned remote_mode = s->cfg.kind == HT_SAMPLER_PARENT
                             ? FAST_PARENT
                             : fast_mode_of(s, s->cfg.kind);
  atomic_fetch_add(&fast_seq, 1);
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&fast_modes, root_mode | remote_mode << 8,
                        memory_order_relaxed);
  atomic_store_explicit(&fast_threshold, s->ratio_threshold,
                        memory_order_relaxed);
  atomic_fetch_add(&fast_seq, 1);
}

/* The published words, or false while a writer is changing them. */
static inline bool read_fast(unsigned *modes, uint64_t *threshold) {
  uint64_t seq = atomic_load_explicit(&fast_seq, memory_order_acquire);
  *modes = atomic_load_explicit(&fast_modes, memory_order_relaxed);
  *threshold = atomic_load_explicit(&fast_threshold, memory_order_relaxed);
  atomic_thread_fence(memory_order_acquire);
  return (seq & 1) == 0 &&
         atomic_load_explicit(&fast_seq, memory_order_relaxed) == seq;
}

/* 1 or 0 for a fast mode, -1 for the slow path. */
static inline int fast_decide(unsigned mode, uint64_t threshold, uint64_t hi,
                              uint64_t lo, uint32_t flags) {
  switch (mode) {
  case FAST_NEVER: return 0;
  case FAST_ALWAYS: return 1;
  case FAST_RATIO: return ht_trace_id_hash(hi, lo) < threshold;
  case FAST_PARENT: return (flags & HT_FLAG_SAMPLED) != 0;
  default: return -1;
  }
}

/* First use: the environment's configuration (bad values fall back to
 * defaults, see ht_sampling_config_from_env). */
static void ensure_initialised(void) {
  lock_writer();
  if (!atomic_load(&active)) {
    ht_sampling_config cfg;
    (void)ht_sampling_config_from_env(&cfg, NULL);
    if (ht_sampling_config_check(&cfg) != 0)
      ht_sampling_config_default(&cfg);
    ht_sampler_init(&initial, &cfg);
    atomic_store(&active, &initial);
    publish_fast(&initial);
  }
  pthread_mutex_unlock(&writer);
}

static ht_sampler *enter(ht_epoch_reader **r) {
  for (;;) {
    *r = ht_epoch_enter();
    ht_sampler *s = atomic_load(&active);
    if (__builtin_expect(s != NULL, 1))
      return s;
    ht_epoch_exit(*r);
    ensure_initialised();
  }
}

uint32_t ht_active_decide_root(uint64_t hi, uint64_t lo, ht_sample_hint hint) {
  unsigned modes;
  uint64_t threshold;
  if (hint == HT_SAMPLE_DEFAULT && read_fast(&modes, &threshold)) {
    int yes = fast_decide(modes & 0xff, threshold, hi, lo, 0);
    if (yes >= 0) {
      count(yes ? C_SAMPLED : C_DROPPED);
      return yes ? HT_FLAG_SAMPLED : 0;
    }
  }
  ht_epoch_reader *r;
  ht_sampler *s = enter(&r);
  uint64_t now = ht_sampler_needs_clock(s, 0) ? ht_now_ns() : 0;
  ht_outcome o;
  uint32_t flags = ht_sampler_root_ex(s, hi, lo, hint, now, &o);
  ht_epoch_exit(r);
  count(flags & HT_FLAG_SAMPLED ? C_SAMPLED : C_DROPPED);
  if (flags & HT_FLAG_DEBUG)
    count(C_DEBUG_FORCED);
  return flags;
}

uint32_t ht_active_decide_remote(uint64_t hi, uint64_t lo, uint32_t flags) {
  unsigned modes;
  uint64_t threshold;
  if (!(flags & HT_FLAG_DEBUG) && read_fast(&modes, &threshold)) {
    int yes = fast_decide(modes >> 8, threshold, hi, lo, flags);
    if (yes >= 0) {
      count(yes ? C_REMOTE_SAMPLED : C_REMOTE_DROPPED);
      return (flags & ~HT_FLAG_KNOWN_MASK) | (yes ? HT_FLAG_SAMPLED : 0u);
    }
  }
  ht_epoch_reader *r;
  ht_sampler *s = enter(&r);
  int debug = (flags & HT_FLAG_DEBUG) != 0;
  uint64_t now = ht_sampler_needs_clock(s, debug) ? ht_now_ns() : 0;
  ht_outcome o;
  uint32_t out = ht_sampler_remote_ex(s, hi, lo, flags, now, &o);
  ht_epoch_exit(r);
  count(out & HT_FLAG_SAMPLED ? C_REMOTE_SAMPLED : C_REMOTE_DROPPED);
  if (o == HT_OUT_DEBUG_HONOURED)
    count(C_DEBUG_HONOURED);
  else if (o == HT_OUT_DEBUG_REFUSED_SAMPLED || o == HT_OUT_DEBUG_REFUSED_DROPPED)
    count(C_DEBUG_REFUSED);
  return out;
}

int ht_sampling_set(const ht_sampling_config *cfg) {
  ht_sampler *next = NULL;
  int rc = ht_sampler_new(cfg, &next);
  if (rc != 0)
    return rc;
  lock_writer();
  ht_sampler *old = atomic_exchange(&active, next);
  publish_fast(next);
  ht_epoch_synchronize();
  if (old != &initial)
    ht_sampler_free(old);
  pthread_mutex_unlock(&writer);
  count(C_CONFIG_CHANGES);
  return 0;
}

void ht_sampling_get(ht_sampling_config *out) {
  if (!out)
    return;
  ht_epoch_reader *r;
  ht_sampler *s = enter(&r);
  *out = s->cfg;
  ht_epoch_exit(r);
}

void ht_sampling_get_stats(ht_sampling_stats *out) {
  if (!out)
    return;
  uint64_t v[C_COUNT];
  for (int i = 0; i < C_COUNT; i++)
    v[i] = atomic_load_explicit(&counters[i].v, memory_order_relaxed);
  out->traces_started = v[C_SAMPLED] + v[C_DROPPED];
  out->traces_sampled = v[C_SAMPLED];
  out->traces_dropped = v[C_DROPPED];
  out->remote_received = v[C_REMOTE_SAMPLED] + v[C_REMOTE_DROPPED];
  out->remote_sampled = v[C_REMOTE_SAMPLED];
  out->remote_dropped = v[C_REMOTE_DROPPED];
  out->debug_forced = v[C_DEBUG_FORCED];
  out->remote_debug_honoured = v[C_DEBUG_HONOURED];
  out->remote_debug_refused = v[C_DEBUG_REFUSED];
  out->config_changes = v[C_CONFIG_CHANGES];
}
