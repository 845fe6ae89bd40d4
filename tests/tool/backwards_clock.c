/* An LTTng-UST clock plugin whose clock runs backwards: loaded into one
 * process of a test session (LTTNG_UST_CLOCK_PLUGIN=path), that process
 * stamps its events, and the span API times its spans (the tracer's
 * clock), going back in time from its start at the monotonic clock's
 * pace. Frequency, uuid and name are LTTng's monotonic clock's: the session cannot tell
 * this clock from the others, as with a host whose clock was set back.
 * What the tool must do with such input: the same outcome with one
 * decoder or many, its spans flagged (tool_backwards.sh). */
#include <lttng/ust-clock.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static uint64_t origin;

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t backwards_read64(void) { return 2 * origin - monotonic_ns(); }

/* LTTng's own monotonic clock's description, which the override must
 * repeat whole: ns, the boot id as uuid, its name and words. */
static uint64_t freq(void) { return 1000000000u; }

static int boot_uuid(char *uuid) {
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  int ok = f != NULL && fread(uuid, 1, LTTNG_UST_UUID_STR_LEN - 1, f) ==
                            LTTNG_UST_UUID_STR_LEN - 1;
  if (f != NULL)
    fclose(f);
  uuid[LTTNG_UST_UUID_STR_LEN - 1] = '\0';
  return ok ? 0 : -1;
}

static const char *name(void) { return "monotonic"; }
static const char *description(void) { return "Monotonic Clock"; }

void lttng_ust_clock_plugin_init(void);
void lttng_ust_clock_plugin_init(void) {
  origin = monotonic_ns();
  int rc = lttng_ust_trace_clock_set_read64_cb(backwards_read64);
  if (rc == 0)
    rc = lttng_ust_trace_clock_set_freq_cb(freq);
  if (rc == 0)
    rc = lttng_ust_trace_clock_set_uuid_cb(boot_uuid);
  if (rc == 0)
    rc = lttng_ust_trace_clock_set_name_cb(name);
  if (rc == 0)
    rc = lttng_ust_trace_clock_set_description_cb(description);
  if (rc == 0)
    rc = lttng_ust_enable_trace_clock_override();
  if (rc != 0)
    fprintf(stderr, "backwards_clock: clock override refused: %s\n", strerror(-rc));
}
