/* Test workload for `hoptrace record --flight`: a process in flight mode
 * that records a small trace and captures it by hand (ht_capture_trace:
 * one hoptrace:capture event), N times, GAP microseconds apart, so the
 * recorder's trigger fires exactly N times at a known pace.
 *
 *   flight_fire FIRES GAP_US [FILL]
 *
 * FILL: before each capture, that many more two-span traces recorded (not
 * captured), so that the rings fill as a busy host's would
 * (bench/flight).
 * Prints "fired N" (captures the library accepted). Exit 0 when every
 * capture was accepted. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hoptrace/capture.h"
#include "hoptrace/span.h"
#include "hoptrace/tracing.h"

/* A client span and its server child, recorded (flight mode), not kept. */
static void two_spans(ht_span *root) {
  ht_span child;
  ht_span_init(&child);
  ht_span_info ri = {"osd_write", HT_SPAN_CLIENT, "client.0", ""};
  ht_span_info ci = {"osd_write", HT_SPAN_SERVER, "osd.0", ""};
  ht_span_start_root(root, &ri, HT_SAMPLE_NO);
  ht_span_start_child(&child, root, &ci);
  ht_span_finish(&child);
  ht_span_finish(root);
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: flight_fire FIRES GAP_US [FILL]\n");
    return 2;
  }
  long fires = atol(argv[1]), gap_us = atol(argv[2]), fill = argc == 4 ? atol(argv[3]) : 0;
  ht_tracing_init();
  if (ht_tracing_provider_state() != HT_PROVIDER_LOADED) {
    fprintf(stderr, "flight_fire: provider not loaded: %s\n", ht_tracing_provider_error());
    return 3;
  }
  ht_flight_set(1);
  long fired = 0;
  for (long i = 0; i < fires; i++) {
    ht_span root;
    ht_span_init(&root);
    for (long k = 0; k <= fill; k++)
      two_spans(&root);
    fired += ht_capture_trace(&root.ctx) == 0;
    struct timespec ts = {gap_us / 1000000, (gap_us % 1000000) * 1000};
    nanosleep(&ts, NULL);
  }
  printf("fired %ld\n", fired);
  return fired == fires ? 0 : 1;
}
