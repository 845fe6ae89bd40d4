/* Head-based sampling: which traces are recorded.
 *
 * A trace is decided once where it enters a process: at a local root, or
 * when a context arrives from a remote peer. Local child spans inherit the
 * decision of their parent span and never consult the sampler.
 *
 * Sampler kinds:
 *   ALWAYS  record every trace.
 *   NEVER   record none.
 *   RATIO   record a trace when a hash of its 128-bit id falls below
 *           ratio * 2^64: every process with the same ratio makes the same
 *           choice for the same id, and a process with a lower ratio
 *           records a subset of what a higher-ratio process records.
 *   RATE    token bucket: at most `rate` traces per second, bursts of
 *           at most `burst`.
 *   PARENT  a remote context's SAMPLED flag decides; local roots are
 *           decided by `root_kind` (ALWAYS, NEVER, RATIO or RATE).
 * ALWAYS, NEVER, RATIO and RATE apply to remote contexts too (they ignore
 * the incoming SAMPLED flag).
 *
 * DEBUG: a local root started with HT_SAMPLE_DEBUG is always recorded. A
 * remote context carrying DEBUG is recorded only when trust_remote_debug
 * is set and the remote-DEBUG token bucket (remote_debug_rate per second)
 * has a token; otherwise its DEBUG flag is dropped and the trace is
 * decided as a local root would be (the incoming SAMPLED flag is ignored),
 * so no peer can force a server to record more than it would on its own.
 *
 * The process has one active configuration. ht_sampling_set() replaces
 * it from any thread; deciding threads never take a lock (they read an
 * atomic pointer; the old configuration is freed once no thread uses it).
 * Until ht_sampling_set() is called, the configuration comes from the
 * environment (see ht_sampling_config_from_env).
 */
#ifndef HOPTRACE_SAMPLER_H
#define HOPTRACE_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "hoptrace/api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ht_sampler_kind {
  HT_SAMPLER_ALWAYS = 0,
  HT_SAMPLER_NEVER = 1,
  HT_SAMPLER_RATIO = 2,
  HT_SAMPLER_RATE = 3,
  HT_SAMPLER_PARENT = 4
} ht_sampler_kind;

/* Grows at the end, as ht_messenger_options: fill it with
 * ht_sampling_config_default (or ht_sampling_config_from_env) first, which
 * set `size`, then change fields; the library reads and writes only the
 * fields that size covers. Every function below taking one answers
 * HT_EINVAL for a size below 2.0's sizeof(ht_sampling_config). */
typedef struct ht_sampling_config {
  size_t size;               /* sizeof(ht_sampling_config) */
  ht_sampler_kind kind;
  ht_sampler_kind root_kind; /* PARENT only: decides local roots; any kind
                                but PARENT */
  double ratio;              /* RATIO (and root RATIO): 0.0 .. 1.0 */
  double rate;               /* RATE: traces per second, >= 0 */
  double burst;              /* RATE: bucket size, >= 1; 0 = max(1, rate) */
  int trust_remote_debug;    /* 1: honour DEBUG from remote peers */
  double remote_debug_rate;  /* honoured remote DEBUG traces per second */
} ht_sampling_config;

/* Defaults: PARENT with root ALWAYS, ratio 1, rate 100/s, burst 0 (auto),
 * remote DEBUG not trusted, remote_debug_rate 10/s; sets cfg->size to the
 * caller's sizeof, which the macro passes: only that many bytes are
 * written. HT_EINVAL, *cfg untouched, for NULL or a size below 2.0's
 * struct; else 0. */
HT_API int ht_sampling_config_default_sized(ht_sampling_config *cfg,
                                            size_t size);
#define ht_sampling_config_default(cfg)                                        \
  ht_sampling_config_default_sized((cfg), sizeof *(cfg))

/* 0 when cfg is usable, HT_EINVAL otherwise (NaN or out-of-range numbers,
 * unknown kind, root_kind PARENT). */
HT_API int ht_sampling_config_check(const ht_sampling_config *cfg);

/* Sets one setting from text, as the environment and a control socket
 * give it. Keys and values:
 *   "sampler"            always | never | ratio | rate | parent
 *   "root"               always | never | ratio | rate   (PARENT's roots)
 *   "ratio"              0 .. 1 (decimal)
 *   "rate"               traces per second (decimal, >= 0)
 *   "burst"              bucket size (decimal, >= 1, or 0 = auto)
 *   "trust_remote_debug" 0 | 1 | true | false | yes | no | on | off
 *   "remote_debug_rate"  traces per second (decimal, >= 0)
 * HT_ENOENT for an unknown key, HT_EINVAL for a bad value; *cfg is
 * unchanged on error. Strings are only read during the call. */
HT_API int ht_sampling_config_set(ht_sampling_config *cfg, const char *key,
                                  const char *value);

/* Defaults, then these environment variables when set:
 *   HT_SAMPLER            -> "sampler"       HT_SAMPLE_ROOT  -> "root"
 *   HT_SAMPLE_RATIO       -> "ratio"         HT_SAMPLE_RATE  -> "rate"
 *   HT_SAMPLE_BURST       -> "burst"
 *   HT_TRUST_REMOTE_DEBUG -> "trust_remote_debug"
 *   HT_REMOTE_DEBUG_RATE  -> "remote_debug_rate"
 * A bad value is ignored (the default stays) and reported: the return
 * value is 0 when every variable parsed, else the first error, with *cfg
 * still fully usable; if bad_var is not NULL it receives the name of the
 * first variable that failed (a static string) or NULL. Setting only
 * HT_SAMPLE_RATIO (or only HT_SAMPLE_RATE) with no HT_SAMPLER selects
 * that kind as PARENT's root sampler. The process's configuration is
 * read this way at its first sampling decision. Sized as
 * ht_sampling_config_default (HT_EINVAL for NULL or a too small size,
 * *cfg then untouched). */
HT_API int ht_sampling_config_from_env_sized(ht_sampling_config *cfg,
                                             size_t size,
                                             const char **bad_var);
#define ht_sampling_config_from_env(cfg, bad_var)                              \
  ht_sampling_config_from_env_sized((cfg), sizeof *(cfg), (bad_var))

/* Writes "sampler=parent root=ratio ratio=0.1 rate=100 burst=0
 * trust_remote_debug=0 remote_debug_rate=10" style text (NUL-terminated)
 * into buf. HT_ENOSPC when cap is too small (256 bytes always suffice). */
HT_API int ht_sampling_config_format(const ht_sampling_config *cfg, char *buf,
                                     size_t cap);

/* Replaces the process's active configuration (copied; cfg is only read
 * during the call). Any thread; concurrent callers are serialised. Token
 * buckets start full. HT_EINVAL for a bad config, HT_ENOMEM. */
HT_API int ht_sampling_set(const ht_sampling_config *cfg);

/* Copies the active configuration into the fields of *out that
 * out->size covers (set it first, as for ht_sampling_stats:
 * `ht_sampling_config cfg = {.size = sizeof cfg};`); out->size is kept.
 * HT_EINVAL for NULL or a size too small. */
HT_API int ht_sampling_get(ht_sampling_config *out);

/* Process-wide counters since start, each monotonic (a snapshot, not a
 * consistent cut). Grows at the end: set `size` before the call. */
typedef struct ht_sampling_stats {
  size_t size;               /* set by the caller: sizeof(ht_sampling_stats) */
  uint64_t traces_started;   /* local roots started */
  uint64_t traces_sampled;   /* ... of which recorded */
  uint64_t traces_dropped;   /* ... of which not recorded by policy */
  uint64_t remote_received;  /* remote contexts continued here */
  uint64_t remote_sampled;   /* ... of which recorded */
  uint64_t remote_dropped;   /* ... of which not recorded by policy */
  uint64_t debug_forced;     /* local roots forced by HT_SAMPLE_DEBUG */
  uint64_t remote_debug_honoured; /* remote DEBUG recorded */
  uint64_t remote_debug_refused;  /* remote DEBUG untrusted or over rate */
  uint64_t config_changes;   /* successful ht_sampling_set calls */
} ht_sampling_stats;

/* Fills the fields of *out that out->size covers:
 *     ht_sampling_stats st = {.size = sizeof st};
 *     ht_sampling_get_stats(&st);
 * HT_EINVAL for NULL or a size below the first counter's end. */
HT_API int ht_sampling_get_stats(ht_sampling_stats *out);

/* --- Standalone samplers (the active configuration is built from one).
 * An ht_sampler may be shared by threads: ht_sampler_decide is lock-free
 * and thread-safe. */
typedef struct ht_sampler ht_sampler;

/* Creates a sampler from cfg (copied). *out owned by the caller: free it
 * with ht_sampler_free. HT_EINVAL, HT_ENOMEM. */
HT_API int ht_sampler_new(const ht_sampling_config *cfg, ht_sampler **out);
HT_API void ht_sampler_free(ht_sampler *s); /* NULL is fine */

/* A per-request override of the sampler, for local roots. */
typedef enum ht_sample_hint {
  HT_SAMPLE_DEFAULT = 0, /* the sampler decides */
  HT_SAMPLE_YES = 1,     /* record this trace */
  HT_SAMPLE_NO = 2,      /* do not record this trace */
  HT_SAMPLE_DEBUG = 3    /* record, and mark DEBUG for downstream peers */
} ht_sample_hint;

/* Decides a local root with trace id (hi, lo) at monotonic time now_ns
 * (only RATE reads it). Returns the new trace's flags: 0, HT_FLAG_SAMPLED
 * or HT_FLAG_SAMPLED | HT_FLAG_DEBUG. Does not touch process counters. */
HT_API uint32_t ht_sampler_decide_root(ht_sampler *s, uint64_t hi, uint64_t lo,
                                       ht_sample_hint hint, uint64_t now_ns);

/* The probability with which a local root decided by s with this hint is
 * recorded, as each root span records it (Dapper's "sampling
 * probability"; the tool weights a trace by 1/p to estimate what was
 * issued), in fixed point: p * 2^32, HT_SAMPLE_P_ONE is 1.
 *   RATIO: the ratio (rounded to 2^-32, at least 2^-32 when above 0);
 *   ALWAYS, a YES or DEBUG hint: 1;  NEVER, a NO hint: 0 (never recorded);
 *   RATE: 0, "unknown": a token bucket's chance depends on how many roots
 *   are offered, which no single decision knows.
 * PARENT's roots: as its root_kind. 0 for NULL s. */
#define HT_SAMPLE_P_ONE (UINT64_C(1) << 32)
HT_API uint64_t ht_sampler_root_probability(const ht_sampler *s,
                                            ht_sample_hint hint);

/* Decides a context received from a remote peer (its trace id and
 * flags). Returns the flags for the local continuation: reserved bits are
 * kept; SAMPLED and DEBUG are set by the policy above. */
HT_API uint32_t ht_sampler_decide_remote(ht_sampler *s, uint64_t hi,
                                         uint64_t lo, uint32_t remote_flags,
                                         uint64_t now_ns);

#ifdef __cplusplus
}
#endif

#endif /* HOPTRACE_SAMPLER_H */
