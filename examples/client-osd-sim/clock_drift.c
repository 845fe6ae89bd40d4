/* An LTTng-UST clock plugin for simulated hosts: CLOCK_MONOTONIC made to
 * run fast or slow by HT_CLOCK_DRIFT_PPM parts per million, so a host's
 * trace clock drifts against the others the way a badly disciplined
 * oscillator does. Test and demo tooling only; never for production.
 *
 * Load it in every process of the host, the session daemon included (it
 * measures the clock's offset from the epoch with the same clock):
 *   LTTNG_UST_CLOCK_PLUGIN=/path/libht-clock-drift.so
 *   HT_CLOCK_DRIFT_PPM=100               (fractional and negative allowed)
 *   HT_CLOCK_DRIFT_ANCHOR_NS=<monotonic ns>   (where the drift starts)
 * The clock is anchor + (monotonic - anchor) * (1 + ppm / 1e6): every
 * process of the host given the same anchor reads the same clock. The
 * name stays "monotonic"; the UUID is derived from the boot id and the
 * rate, so a drifting clock never claims to be the machine's own. */
#include <lttng/ust-clock.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void lttng_ust_clock_plugin_init(void);

static int64_t drift_ppb;   /* parts per billion */
static uint64_t anchor_ns;  /* monotonic time where both clocks agree */
static char clock_uuid[LTTNG_UST_UUID_STR_LEN];

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t drifting_read64(void) {
  uint64_t now = monotonic_ns();
  __int128 since = (__int128)now - (__int128)anchor_ns;
  return (uint64_t)((__int128)now + since * drift_ppb / 1000000000);
}

static uint64_t drifting_freq(void) { return 1000000000u; }

static int drifting_uuid(char *uuid) {
  memcpy(uuid, clock_uuid, LTTNG_UST_UUID_STR_LEN);
  return 0;
}

static const char *drifting_name(void) { return "monotonic"; }

static const char *drifting_description(void) {
  return "Monotonic clock scaled by HT_CLOCK_DRIFT_PPM (hoptrace simulated host)";
}

/* The boot id with its last 12 hex digits replaced by the rate in ppb:
 * stable for every process of the host, distinct per rate. */
static void make_uuid(void) {
  char boot[64] = "00000000-0000-4000-8000-000000000000";
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f != NULL) {
    if (fgets(boot, sizeof(boot), f) == NULL)
      strcpy(boot, "00000000-0000-4000-8000-000000000000");
    fclose(f);
  }
  boot[36] = '\0';
  snprintf(clock_uuid, sizeof(clock_uuid), "%.24s%012llx", boot,
           (unsigned long long)((uint64_t)drift_ppb & 0xffffffffffffULL));
}

void lttng_ust_clock_plugin_init(void) {
  const char *ppm = getenv("HT_CLOCK_DRIFT_PPM");
  const char *anchor = getenv("HT_CLOCK_DRIFT_ANCHOR_NS");
  char *end = NULL;
  double value = ppm != NULL ? strtod(ppm, &end) : 0;
  if (ppm == NULL || *end != '\0' || value < -100000 || value > 100000) {
    fprintf(stderr, "libht-clock-drift: HT_CLOCK_DRIFT_PPM must be a number of ppm "
                    "within +-100000; clock not overridden\n");
    return;
  }
  drift_ppb = (int64_t)(value * 1000);
  anchor_ns = anchor != NULL ? strtoull(anchor, NULL, 10) : monotonic_ns();
  make_uuid();
  if (lttng_ust_trace_clock_set_read64_cb(drifting_read64) ||
      lttng_ust_trace_clock_set_freq_cb(drifting_freq) ||
      lttng_ust_trace_clock_set_uuid_cb(drifting_uuid) ||
      lttng_ust_trace_clock_set_name_cb(drifting_name) ||
      lttng_ust_trace_clock_set_description_cb(drifting_description) ||
      lttng_ust_enable_trace_clock_override()) {
    fprintf(stderr, "libht-clock-drift: lttng-ust refused the clock override\n");
  }
}
