/* Start-up: installs the recorder into propagate, loads the LTTng-UST
 * provider libhoptrace-tp.so with dlopen (unless HT_LTTNG=0), and warns
 * on stderr about a bad HT_SAMPLE* variable. libhoptrace runs this from a
 * constructor.
 * Must never: fail the program, print anything else unless asked
 * (HT_LTTNG_VERBOSE=1), or dlclose the provider (events may be in flight
 * on other threads).
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hoptrace/capture.h"
#include "hoptrace/sampler.h"
#include "hoptrace/tracing.h"
#include "common/clock.h"
#include "propagate/active.h"
#include "propagate/events.h"
#include "recording/flight_memory.h"
#include "recording/intern.h"
#include "recording/recorder.h"

#define PROVIDER_SONAME "libhoptrace-tp.so.0"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static atomic_int provider_state; /* ht_provider_state */
static char provider_error[512];

static int env_is_off(const char *v) {
  return v && (strcmp(v, "0") == 0 || strcasecmp(v, "off") == 0 ||
               strcasecmp(v, "no") == 0 || strcasecmp(v, "false") == 0);
}

static void note_error(const char *what) {
  const char *e = dlerror();
  snprintf(provider_error, sizeof(provider_error), "%s: %s", what,
           e ? e : "unknown error");
}

/* The provider next to the object holding this code (libhoptrace.so or a
 * statically linked executable), so build trees and private prefixes
 * work without LD_LIBRARY_PATH. */
static void *open_next_to_us(void) {
  Dl_info info;
  if (!dladdr((void *)&ht_tracing_init, &info) || !info.dli_fname)
    return NULL;
  const char *slash = strrchr(info.dli_fname, '/');
  if (!slash)
    return NULL;
  char path[PATH_MAX];
  int n = snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - info.dli_fname),
                   info.dli_fname, PROVIDER_SONAME);
  if (n < 0 || (size_t)n >= sizeof(path))
    return NULL;
  return dlopen(path, RTLD_NOW | RTLD_GLOBAL);
}

static void *open_provider(void) {
  const char *path = getenv("HT_LTTNG_PROVIDER");
  if (path && *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h)
      note_error(path);
    return h;
  }
  void *h = open_next_to_us();
  if (!h)
    h = dlopen(PROVIDER_SONAME, RTLD_NOW | RTLD_GLOBAL);
  if (!h)
    note_error(PROVIDER_SONAME);
  return h;
}

/* Span sides are timed with the clock LTTng stamps events with (a clock
 * plugin's, if LTTNG_UST_CLOCK_PLUGIN loaded one): lttng-ust, loaded with
 * the provider, says which. */
static void use_tracer_clock(void *provider) {
  typedef int (*get_fn)(ht_clock_fn *read);
  get_fn get = (get_fn)(uintptr_t)dlsym(provider, "lttng_ust_trace_clock_get_read64_cb");
  ht_clock_fn read = NULL;
  if (get != NULL && get(&read) == 0 && read != NULL)
    ht_clock_use(read);
}

/* A mistyped HT_SAMPLER=... must not pass silently: the default applies,
 * and we say so once. */
static void warn_bad_sampling_env(void) {
  const char *bad = ht_active_init_from_env();
  if (bad)
    fprintf(stderr, "hoptrace: ignoring %s=%s (bad value; default kept)\n",
            bad, getenv(bad) ? getenv(bad) : "");
}

/* HT_NAMES_REFRESH_MS and HT_FLIGHT (flight mode), as capture.h says.
 * HT_CAPTURE (what fires a capture) is the traced messenger's, read
 * there (messenger/traced_capture.c). */
static void flight_from_env(void) {
  const char *refresh = getenv("HT_NAMES_REFRESH_MS");
  if (refresh != NULL && *refresh != '\0') {
    char *end;
    long ms = strtol(refresh, &end, 10);
    if (*end == '\0' && ms >= 10 && ms <= 60000)
      ht_intern_refresh = (int64_t)ms * 1000000;
    else
      fprintf(stderr, "hoptrace: ignoring HT_NAMES_REFRESH_MS=%s (10 to 60000)\n", refresh);
  }
  const char *flight = getenv("HT_FLIGHT");
  if (flight == NULL || *flight == '\0' || env_is_off(flight))
    return;
  ht_flight_set(1);
  if (strcmp(flight, "memory") != 0)
    return;
  /* spans in the process's own rings, HT_FLIGHT_SLOTS records a thread */
  const char *slots = getenv("HT_FLIGHT_SLOTS");
  unsigned long n = 0;
  if (slots != NULL && *slots != '\0') {
    char *end;
    n = strtoul(slots, &end, 10);
    if (*end != '\0' || n < 64 || n > (1ul << 24) || (n & (n - 1)) != 0) {
      fprintf(stderr, "hoptrace: ignoring HT_FLIGHT_SLOTS=%s (a power of two, 64 to 16777216)\n",
              slots);
      n = 0;
    }
  }
  ht_fm_enable((uint32_t)n);
}

static void do_init(void) {
  ht_events_install(&ht_recorder_ops);
  warn_bad_sampling_env();
  flight_from_env();
  if (env_is_off(getenv("HT_LTTNG"))) {
    atomic_store(&provider_state, HT_PROVIDER_DISABLED);
    return;
  }
  /* The handle is kept for the life of the process, never closed. */
  void *h = open_provider();
  if (h)
    use_tracer_clock(h);
  atomic_store(&provider_state, h ? HT_PROVIDER_LOADED : HT_PROVIDER_MISSING);
  if (!h && getenv("HT_LTTNG_VERBOSE"))
    fprintf(stderr, "hoptrace: tracing off (%s)\n", provider_error);
}

int ht_tracing_init(void) {
  pthread_once(&init_once, do_init);
  return 0;
}

ht_provider_state ht_tracing_provider_state(void) {
  return (ht_provider_state)atomic_load(&provider_state);
}

const char *ht_tracing_provider_error(void) {
  return ht_tracing_provider_state() == HT_PROVIDER_MISSING ? provider_error
                                                            : "";
}

/* Shared library: start-up is automatic. (In a static link this object
 * is only present when the program calls ht_tracing_* itself.) */
__attribute__((constructor)) static void loader_ctor(void) {
  ht_tracing_init();
}
