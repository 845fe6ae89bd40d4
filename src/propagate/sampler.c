/* Sampler decisions: always, never, ratio on the trace id, token-bucket
 * rate, parent-based, and the remote-DEBUG policy.
 * Must never: lock, allocate on a decision, or read anything but its own
 * state and the arguments (decisions are reproducible given now_ns).
 */
#include <stdlib.h>
#include <time.h>

#include "hoptrace/context.h"
#include "hoptrace/error.h"
#include "propagate/sampler_impl.h"
#include "propagate/span_path.h"

uint64_t ht_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Fixed constants: changing them changes every process's ratio choices. */
uint64_t ht_trace_id_hash(uint64_t hi, uint64_t lo) {
  uint64_t z = lo ^ (hi * 0x9e3779b97f4a7c15ull) ^ 0x6a09e667f3bcc909ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static ht_sampler_kind root_kind_of(const ht_sampler *s) {
  return s->cfg.kind == HT_SAMPLER_PARENT ? s->cfg.root_kind : s->cfg.kind;
}

void ht_bucket_init(ht_bucket *b, double rate, double burst) {
  atomic_init(&b->tat_ns, 0);
  b->unlimited = 0;
  b->interval_ns = 0;
  b->tolerance_ns = 0;
  if (!(rate > 0))
    return;
  if (burst < 1)
    burst = rate < 1 ? 1 : rate;
  double interval = 1e9 / rate;
  if (interval < 1) { /* more than 1e9 per second: never limits */
    b->unlimited = 1;
    return;
  }
  /* A tiny positive rate (1e-30/s) gives an interval beyond uint64: cap it
   * at 1e18 ns (~31 years), which is "once, then effectively never". */
  b->interval_ns = interval > 1e18 ? (uint64_t)1e18 : (uint64_t)interval;
  double tol = (burst - 1) * interval;
  b->tolerance_ns = tol > 1e18 ? (uint64_t)1e18 : (uint64_t)tol;
}

int ht_bucket_take(ht_bucket *b, uint64_t now_ns) {
  if (b->unlimited)
    return 1;
  if (b->interval_ns == 0)
    return 0;
  uint64_t tat = atomic_load_explicit(&b->tat_ns, memory_order_relaxed);
  for (;;) {
    uint64_t base = tat > now_ns ? tat : now_ns;
    /* Admit while the backlog stays within burst: tat - now <= tol. */
    if (base - now_ns > b->tolerance_ns)
      return 0;
    uint64_t next = base + b->interval_ns;
    if (atomic_compare_exchange_weak_explicit(&b->tat_ns, &tat, next,
                                              memory_order_relaxed,
                                              memory_order_relaxed))
      return 1;
  }
}

static unsigned plain_mode_of(ht_sampler_kind kind, double ratio) {
  switch (kind) {
  case HT_SAMPLER_ALWAYS: return HT_PLAIN_ALWAYS;
  case HT_SAMPLER_RATIO: /* the ends need no hash of the trace id */
    return ratio >= 1.0 ? HT_PLAIN_ALWAYS
           : ratio <= 0.0 ? HT_PLAIN_NEVER
                          : HT_PLAIN_RATIO;
  case HT_SAMPLER_RATE: return HT_PLAIN_STATEFUL;
  case HT_SAMPLER_PARENT: return HT_PLAIN_PARENT;
  case HT_SAMPLER_NEVER:
  default: return HT_PLAIN_NEVER;
  }
}

void ht_sampler_init(ht_sampler *s, const ht_sampling_config *cfg) {
  ht_sampling_config_read(cfg, &s->cfg);
  cfg = &s->cfg;
  /* a root has no parent to follow: PARENT as a root policy records none */
  s->root_mode = plain_mode_of(root_kind_of(s), cfg->ratio);
  if (s->root_mode == HT_PLAIN_PARENT)
    s->root_mode = HT_PLAIN_NEVER;
  s->remote_mode = plain_mode_of(cfg->kind, cfg->ratio);
  /* 2^64 * ratio, computed in long double-free form: ratio < 1 here;
   * rounded as the fast path's word needs (sampler_impl.h), so that both
   * paths decide alike */
  uint64_t t = cfg->ratio >= 1.0 ? UINT64_MAX
                                 : (uint64_t)(cfg->ratio * 18446744073709551616.0);
  t &= ~(uint64_t)HT_FAST_MODE_BITS;
  s->ratio_threshold = t == 0 && cfg->ratio > 0.0 ? HT_FAST_MODE_BITS + 1u : t;
  ht_bucket_init(&s->rate_bucket, cfg->rate, cfg->burst);
  ht_bucket_init(&s->debug_bucket, cfg->remote_debug_rate, 0);
}

int ht_sampler_new(const ht_sampling_config *cfg, ht_sampler **out) {
  if (!cfg || !out || ht_sampling_config_check(cfg) != 0)
    return HT_EINVAL;
  ht_sampler *s = calloc(1, sizeof(*s));
  if (!s)
    return HT_ENOMEM;
  ht_sampler_init(s, cfg);
  *out = s;
  return 0;
}

int ht_sampler_needs_clock(const ht_sampler *s, int remote_debug) {
  return s->root_mode == HT_PLAIN_STATEFUL ||
         s->remote_mode == HT_PLAIN_STATEFUL || remote_debug;
}

void ht_sampler_free(ht_sampler *s) { free(s); }

/* A decision by mode: the plain ones, else the RATE bucket. */
static int decide(ht_sampler *s, unsigned mode, uint64_t hi, uint64_t lo,
                  uint32_t flags, uint64_t now_ns) {
  int yes = ht_plain_decide(mode, s->ratio_threshold, hi, lo, flags);
  return yes >= 0 ? yes : ht_bucket_take(&s->rate_bucket, now_ns);
}

uint32_t ht_sampler_root_ex(ht_sampler *s, uint64_t hi, uint64_t lo,
                            ht_sample_hint hint, uint64_t now_ns,
                            ht_outcome *out) {
  switch (hint) {
  case HT_SAMPLE_DEBUG:
    *out = HT_OUT_FORCED;
    return HT_FLAG_SAMPLED | HT_FLAG_DEBUG;
  case HT_SAMPLE_YES:
    *out = HT_OUT_FORCED;
    return HT_FLAG_SAMPLED;
  case HT_SAMPLE_NO:
    *out = HT_OUT_FORCED;
    return 0;
  case HT_SAMPLE_DEFAULT:
  default:
    break;
  }
  int yes = decide(s, s->root_mode, hi, lo, 0, now_ns);
  *out = yes ? HT_OUT_SAMPLED : HT_OUT_DROPPED;
  return yes ? HT_FLAG_SAMPLED : 0;
}

uint64_t ht_sampler_root_probability(const ht_sampler *s, ht_sample_hint hint) {
  if (s == NULL || hint == HT_SAMPLE_NO)
    return 0;
  if (hint == HT_SAMPLE_YES || hint == HT_SAMPLE_DEBUG)
    return HT_SAMPLE_P_ONE;
  return ht_plain_prob(s->root_mode, s->ratio_threshold);
}

uint32_t ht_sampler_remote_ex(ht_sampler *s, uint64_t hi, uint64_t lo,
                              uint32_t flags, uint64_t now_ns,
                              ht_outcome *out) {
  uint32_t keep = flags & ~HT_DECISION_FLAGS;
  if (flags & HT_FLAG_DEBUG) {
    if (s->cfg.trust_remote_debug &&
        ht_bucket_take(&s->debug_bucket, now_ns)) {
      *out = HT_OUT_DEBUG_HONOURED;
      return keep | HT_FLAG_SAMPLED | HT_FLAG_DEBUG;
    }
    /* Refused: decide as a local root would, ignoring the peer's flags. */
    int yes = decide(s, s->root_mode, hi, lo, 0, now_ns);
    *out = yes ? HT_OUT_DEBUG_REFUSED_SAMPLED : HT_OUT_DEBUG_REFUSED_DROPPED;
    return keep | (yes ? HT_FLAG_SAMPLED : 0);
  }
  int yes = decide(s, s->remote_mode, hi, lo, flags, now_ns);
  *out = yes ? HT_OUT_SAMPLED : HT_OUT_DROPPED;
  return keep | (yes ? HT_FLAG_SAMPLED : 0);
}

uint32_t ht_sampler_decide_root(ht_sampler *s, uint64_t hi, uint64_t lo,
                                ht_sample_hint hint, uint64_t now_ns) {
  ht_outcome o;
  return s ? ht_sampler_root_ex(s, hi, lo, hint, now_ns, &o) : 0;
}

uint32_t ht_sampler_decide_remote(ht_sampler *s, uint64_t hi, uint64_t lo,
                                  uint32_t remote_flags, uint64_t now_ns) {
  ht_outcome o;
  return s ? ht_sampler_remote_ex(s, hi, lo, remote_flags, now_ns, &o) : 0;
}
