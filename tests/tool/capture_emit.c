/* Test helper: writes hoptrace:capture events, as a traced process in
 * flight mode would, so the tool's reading of captures is tested against
 * a real session daemon's snapshots whatever the library emits. One event
 * per line of standard input:
 *   TRACE(32 hex) SPAN(hex) VPID WHY HOPS THRESHOLD VALUE ORIGIN
 * (WHY: hoptrace_schema.h's HT_CAPTURE_*). The provider is the one
 * HT_LTTNG_PROVIDER names, loaded before the first event. Exit 0 when every
 * line was written. */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "hoptrace_tp.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hex64(const char *s, size_t n, uint64_t *out) {
  char buf[17];
  if (n == 0 || n > 16)
    return -1;
  memcpy(buf, s, n);
  buf[n] = '\0';
  char *end;
  *out = strtoull(buf, &end, 16);
  return *end == '\0' ? 0 : -1;
}

int main(void) {
  const char *provider = getenv("HT_LTTNG_PROVIDER");
  if (provider == NULL || dlopen(provider, RTLD_NOW | RTLD_GLOBAL) == NULL) {
    fprintf(stderr, "capture_emit: cannot load the provider (HT_LTTNG_PROVIDER): %s\n",
            provider ? dlerror() : "unset");
    return 1;
  }
  char line[512], trace[40], origin[128];
  unsigned long long span, threshold, value;
  unsigned vpid, why, hops;
  int written = 0;
  while (fgets(line, sizeof(line), stdin) != NULL) {
    if (sscanf(line, "%39s %llx %u %u %u %llu %llu %127s", trace, &span, &vpid, &why, &hops,
               &threshold, &value, origin) != 8 || strlen(trace) != 32) {
      fprintf(stderr, "capture_emit: bad line: %s", line);
      return 1;
    }
    ht_rec_capture r = {.vpid = vpid, .why = (uint8_t)why, .hops = (uint8_t)hops,
                        .threshold = threshold, .value = value, .origin = origin};
    if (hex64(trace, 16, &r.ids[0]) != 0 || hex64(trace + 16, 16, &r.ids[1]) != 0) {
      fprintf(stderr, "capture_emit: bad trace id %s\n", trace);
      return 1;
    }
    r.ids[2] = span;
    r.ids[3] = 0;
    lttng_ust_tracepoint(hoptrace, capture, &r);
    written++;
  }
  printf("capture_emit: %d capture events\n", written);
  return 0;
}
