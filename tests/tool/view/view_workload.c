/* Workload for the waterfall tests: records N traces through the span API
 * whose views differ in what the page filters on, so every filter has
 * something to keep and something to drop:
 *   - operation: "read", "write" or "stat" in turn (trace i: i % 3);
 *   - services: a gateway, then "mds" for stat or osd.1..osd.K otherwise;
 *   - errors: every 7th trace's last backend span fails (HT_EIO, -22: the
 *     server's own fault, so its server span is ERROR as its client's);
 *   - duration: trace i's backends each sleep (i % 4) * SLOW_US.
 * Prints one line per trace to EXPECT: "TRACE OP SPANS ERROR".
 *
 *   view_workload TRACES FANOUT SLOW_US [EXPECT] */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hoptrace/error.h"
#include "hoptrace/span.h"
#include "hoptrace/tracing.h"

static const char *const ops[] = {"read", "write", "stat"};

static void pause_us(long us) {
  if (us <= 0)
    return;
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

/* One client -> server RPC under parent: the server side sleeps `busy`
 * and fails with `err` when non-zero. Returns the spans recorded. */
static int rpc(const ht_span *parent, const char *op, const char *service, int port, long busy,
               int err) {
  char addr[40];
  snprintf(addr, sizeof(addr), "tcp://127.0.0.1:%d", port);
  ht_span_info ci = {op, HT_SPAN_CLIENT, "gateway", "tcp://127.0.0.1:8080"};
  ht_span_info si = {op, HT_SPAN_SERVER, service, addr};
  ht_span c, s;
  ht_span_init(&c);
  ht_span_init(&s);
  if (ht_span_start_child(&c, parent, &ci) != 0 || ht_span_start_child(&s, &c, &si) != 0)
    return -1;
  ht_span_annotate(&c, HT_ANN_CLIENT_SEND);
  ht_span_msg_send(&c, HT_MSG_REQUEST, (uint64_t)port, 4096, addr);
  ht_span_annotate(&s, HT_ANN_SERVER_RECV);
  ht_span_kv_int(&s, "object_size", 4096 + port);
  pause_us(busy);
  if (err) {
    ht_span_set_error(&s, err, "EIO: disk read failed");
    ht_span_set_error(&c, err, "backend error");
  }
  ht_span_annotate(&s, HT_ANN_SERVER_SEND);
  ht_span_finish(&s);
  ht_span_annotate(&c, HT_ANN_CLIENT_RECV);
  ht_span_finish(&c);
  return 2;
}

static int one_trace(long i, int fanout, long slow_us, FILE *expect) {
  const char *op = ops[i % 3];
  ht_span_info ri = {op, HT_SPAN_SERVER, "gateway", "tcp://127.0.0.1:8080"};
  ht_span root;
  ht_span_init(&root);
  if (ht_span_start_root(&root, &ri, HT_SAMPLE_YES) != 0)
    return -1;
  ht_span_kv_str(&root, "bucket", i % 2 ? "photos" : "logs");
  int spans = 1, backends = i % 3 == 2 ? 1 : fanout, failed = i % 7 == 0;
  for (int b = 0; b < backends; b++) {
    char service[16];
    snprintf(service, sizeof(service), i % 3 == 2 ? "mds" : "osd.%d", b + 1);
    int n = rpc(&root, op, service, 6800 + b, (i % 4) * slow_us,
                failed && b == backends - 1 ? HT_EIO : 0);
    if (n < 0)
      return -1;
    spans += n;
  }
  ht_span_finish(&root);
  if (expect != NULL)
    fprintf(expect, "%016" PRIx64 "%016" PRIx64 " %s %d %d\n", root.ctx.trace_id_hi,
            root.ctx.trace_id_lo, op, spans, failed);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: view_workload TRACES FANOUT SLOW_US [EXPECT]\n");
    return 2;
  }
  long traces = atol(argv[1]), fanout = atol(argv[2]), slow_us = atol(argv[3]);
  ht_tracing_init();
  if (ht_tracing_provider_state() != HT_PROVIDER_LOADED) {
    fprintf(stderr, "view_workload: provider not loaded: %s\n", ht_tracing_provider_error());
    return 3;
  }
  FILE *expect = NULL;
  if (argc == 5 && (expect = fopen(argv[4], "w")) == NULL) {
    perror(argv[4]);
    return 2;
  }
  for (long i = 0; i < traces; i++)
    if (one_trace(i, (int)fanout, slow_us, expect) != 0) {
      fprintf(stderr, "view_workload: span start failed\n");
      return 1;
    }
  if (expect != NULL && fclose(expect) != 0)
    return 2;
  return 0;
}
