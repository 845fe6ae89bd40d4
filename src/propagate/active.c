/* The process-wide sampling configuration and its counters.
 *
 * Deciding threads read an atomic pointer inside an epoch read section
 * (no lock); ht_sampling_set swaps in a new sampler under a writer mutex,
 * waits for readers of the old one to leave, then frees it. Samplers
 * that need no clock and no state (always, never, ratio, parent) are
 * also published as one word (ratio threshold and both modes,
 * sampler_impl.h HT_FAST_*), so their decisions take no epoch section (a
 * full barrier), no calls and one load: a reader sees the old or the new
 * configuration whole.
 * Must never: lock or allocate on a decision, or free a sampler a reader
 * may still hold.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "common/counters.h"
#include "common/sized.h"
#include "hoptrace/context.h"
#include "hoptrace/error.h"
#include "propagate/active.h"
#include "propagate/span_path.h"
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

/* --- the clock-free fast path */

_Atomic uint64_t ht_active_fast;

/* Writer lock held: what ht_sampler_root_ex/remote_ex would decide
 * (default hint, no remote DEBUG) for s, as one word. */
static void publish_fast(const ht_sampler *s) {
  atomic_store_explicit(&ht_active_fast,
                        HT_FAST_WORD(s->ratio_threshold, s->root_mode, s->remote_mode),
                        memory_order_release);
}

/* The variable whose bad value the environment's configuration ignored
 * (written once, under the writer lock, before `active` is published). */
static const char *env_bad_var;

/* First use: the environment's configuration (bad values fall back to
 * defaults, see ht_sampling_config_from_env). The only place the
 * environment is read for sampling. */
static void ensure_initialised(void) {
  lock_writer();
  if (!atomic_load(&active)) {
    ht_sampling_config cfg;
    (void)ht_sampling_config_from_env(&cfg, &env_bad_var);
    if (ht_sampling_config_check(&cfg) != 0)
      ht_sampling_config_default(&cfg);
    ht_sampler_init(&initial, &cfg);
    atomic_store(&active, &initial);
    publish_fast(&initial);
  }
  pthread_mutex_unlock(&writer);
}

const char *ht_active_init_from_env(void) {
  if (!atomic_load(&active))
    ensure_initialised();
  lock_writer();
  const char *bad = env_bad_var;
  pthread_mutex_unlock(&writer);
  return bad;
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

ht_root_decision ht_active_decide_root_slow(uint64_t hi, uint64_t lo,
                                            ht_sample_hint hint) {
  ht_epoch_reader *r;
  ht_sampler *s = enter(&r);
  uint64_t now = ht_sampler_needs_clock(s, 0) ? ht_now_ns() : 0;
  ht_outcome o;
  uint32_t flags = ht_sampler_root_ex(s, hi, lo, hint, now, &o);
  uint64_t p = flags & HT_FLAG_SAMPLED ? ht_sampler_root_probability(s, hint) : 0;
  ht_epoch_exit(r);
  ht_counter_add(
      flags & HT_FLAG_SAMPLED ? HT_CTR_ROOT_SAMPLED : HT_CTR_ROOT_DROPPED, 1);
  if (flags & HT_FLAG_DEBUG)
    ht_counter_add(HT_CTR_DEBUG_FORCED, 1);
  return (ht_root_decision){p, flags};
}

uint32_t ht_active_decide_remote_slow(uint64_t hi, uint64_t lo,
                                      uint32_t flags) {
  ht_epoch_reader *r;
  ht_sampler *s = enter(&r);
  int debug = (flags & HT_FLAG_DEBUG) != 0;
  uint64_t now = ht_sampler_needs_clock(s, debug) ? ht_now_ns() : 0;
  ht_outcome o;
  uint32_t out = ht_sampler_remote_ex(s, hi, lo, flags, now, &o);
  ht_epoch_exit(r);
  ht_counter_add(
      out & HT_FLAG_SAMPLED ? HT_CTR_REMOTE_SAMPLED : HT_CTR_REMOTE_DROPPED, 1);
  if (o == HT_OUT_DEBUG_HONOURED)
    ht_counter_add(HT_CTR_DEBUG_HONOURED, 1);
  else if (o == HT_OUT_DEBUG_REFUSED_SAMPLED || o == HT_OUT_DEBUG_REFUSED_DROPPED)
    ht_counter_add(HT_CTR_DEBUG_REFUSED, 1);
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
  ht_counter_add(HT_CTR_CONFIG_CHANGES, 1);
  return 0;
}

int ht_sampling_get(ht_sampling_config *out) {
  if (!out || out->size < HT_SAMPLING_CONFIG_SIZE_MIN)
    return HT_EINVAL;
  ht_epoch_reader *r;
  ht_sampler *s = enter(&r);
  (void)ht_sized_copy_out(out, &s->cfg, sizeof(s->cfg),
                          HT_SAMPLING_CONFIG_SIZE_MIN);
  ht_epoch_exit(r);
  return 0;
}

int ht_sampling_get_stats(ht_sampling_stats *caller) {
  ht_sampling_stats all = {.size = sizeof(all)}, *out = &all;
  enum { FIRST = HT_CTR_ROOT_SAMPLED, N = HT_CTR_CONFIG_CHANGES - FIRST + 1 };
  uint64_t v[N];
  ht_counters_read(HT_CTR_ROOT_SAMPLED, N, v);
#define V(c) v[HT_CTR_##c - FIRST]
  out->traces_started = V(ROOT_SAMPLED) + V(ROOT_DROPPED);
  out->traces_sampled = V(ROOT_SAMPLED);
  out->traces_dropped = V(ROOT_DROPPED);
  out->remote_received = V(REMOTE_SAMPLED) + V(REMOTE_DROPPED);
  out->remote_sampled = V(REMOTE_SAMPLED);
  out->remote_dropped = V(REMOTE_DROPPED);
  out->debug_forced = V(DEBUG_FORCED);
  out->remote_debug_honoured = V(DEBUG_HONOURED);
  out->remote_debug_refused = V(DEBUG_REFUSED);
  out->config_changes = V(CONFIG_CHANGES);
#undef V
  return ht_sized_copy_out(caller, &all, sizeof(all),
                           offsetof(ht_sampling_stats, traces_started) +
                               sizeof(all.traces_started)) == 0
             ? 0
             : HT_EINVAL;
}
