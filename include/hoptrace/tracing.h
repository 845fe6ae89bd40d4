/* Tracing start-up: connects spans to the LTTng-UST provider `hoptrace`
 * and its USDT markers.
 *
 * libhoptrace never links liblttng-ust. The tracepoint provider is a
 * separate shared object, libhoptrace-tp.so, loaded at start-up:
 *   - libhoptrace calls ht_tracing_init() from a constructor (with the
 *     static library the constructor comes along only when the program
 *     references a ht_tracing_* function: call ht_tracing_init() once);
 *   - HT_LTTNG=0 in the environment: the provider is not loaded;
 *   - HT_LTTNG_PROVIDER=/path/libhoptrace-tp.so: load that file instead
 *     of searching (default: the directory of libhoptrace.so, then the
 *     dynamic linker's search path, soname libhoptrace-tp.so.0);
 *   - LD_PRELOAD=libhoptrace-tp.so or linking it also work.
 * When the provider (or lttng-ust) cannot be loaded the program runs
 * untraced; USDT markers keep working for perf/bpftrace/SystemTap.
 * Sampling configuration is read from the environment (sampler.h).
 */
#ifndef HOPTRACE_TRACING_H
#define HOPTRACE_TRACING_H

#include "hoptrace/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Idempotent and thread-safe (the first call does the work). Returns 0,
 * also when the provider was not loaded (see ht_tracing_provider_state). */
HT_API int ht_tracing_init(void);

typedef enum ht_provider_state {
  HT_PROVIDER_NOT_INITIALISED = 0,
  HT_PROVIDER_LOADED = 1,   /* libhoptrace-tp.so is in the process */
  HT_PROVIDER_DISABLED = 2, /* HT_LTTNG=0 */
  HT_PROVIDER_MISSING = 3   /* could not be loaded: running untraced */
} ht_provider_state;

HT_API ht_provider_state ht_tracing_provider_state(void);

/* Why the provider is missing (dlerror text), or "". Static storage,
 * valid until exit. */
HT_API const char *ht_tracing_provider_error(void);

#ifdef __cplusplus
}
#endif

#endif /* HOPTRACE_TRACING_H */
