/* Benchmark of the propagation core and the hoptrace provider, one run:
 *   1. disabled tracepoint (provider loaded, no session): raw and via a
 *      sampled span's hop event;
 *   2. with a recording session (overwrite mode, so every event is
 *      written): hop event through the span API vs a raw LTTng event with
 *      the same fields (the floor);
 *   3. span start + annotation + finish, unsampled and sampled.
 * Prints a table and writes it to bench/results/propagate.txt with the
 * machine and commit (bench/common/bench_report.h). Drives `lttng`
 * itself (a unique session, destroyed at the end); needs a running
 * lttng-sessiond (run.sh starts one).
 *   bench_propagate WORK_DIR
 * Must never: assert on timings (figures are information, not tests). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hoptrace/sampler.h"
#include "hoptrace/span.h"
#include "hoptrace/tracing.h"
#include "bench_report.h"
#include "htbench_tp.h"

#define ITERS 1000000u
#define ROUNDS 5
#define PEER "tcp://127.0.0.1:6800"

static ht_span sampled_span;
static const ht_span_info info = {"osd_write", HT_SPAN_CLIENT, "client.4",
                                  PEER};

static inline void barrier(void) { __asm__ __volatile__("" ::: "memory"); }

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void raw_event(unsigned n) {
  const ht_trace_context *c = &sampled_span.ctx;
  for (unsigned i = 0; i < n; i++) {
    barrier();
    lttng_ust_tracepoint(htbench, hop_raw, c->trace_id_hi, c->trace_id_lo,
                         c->span_id, c->parent_span_id, 1, i, 4096, PEER);
  }
}

static void hop_event(unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    barrier();
    ht_span_msg_send(&sampled_span, HT_MSG_REQUEST, i, 4096, PEER);
  }
}

static void span_triple(unsigned n) {
  ht_span s;
  ht_span_init(&s); /* once: a finished span starts again */
  for (unsigned i = 0; i < n; i++) {
    barrier();
    ht_span_start_root(&s, &info, HT_SAMPLE_DEFAULT);
    ht_span_annotate(&s, HT_ANN_CLIENT_SEND);
    ht_span_finish(&s);
  }
}

/* A child of an unsampled span: no sampler decision, ids only. */
static ht_span unsampled_parent;
static void child_triple(unsigned n) {
  ht_span s;
  ht_span_init(&s); /* once: a finished span starts again */
  for (unsigned i = 0; i < n; i++) {
    barrier();
    ht_span_start_child(&s, &unsampled_parent, &info);
    ht_span_annotate(&s, HT_ANN_SERVER_RECV);
    ht_span_finish(&s);
  }
}

/* Best of ROUNDS, in ns per operation. */
static double measure(void (*fn)(unsigned)) {
  double best = 1e300;
  fn(ITERS / 10); /* warm up */
  for (int r = 0; r < ROUNDS; r++) {
    double t0 = now_ns();
    fn(ITERS);
    double t = (now_ns() - t0) / ITERS;
    if (t < best)
      best = t;
  }
  return best;
}

static void use_sampler(ht_sampler_kind kind) {
  ht_sampling_config c;
  ht_sampling_config_default(&c);
  c.kind = kind;
  if (ht_sampling_set(&c) != 0) {
    fprintf(stderr, "bench: cannot set sampler\n");
    exit(1);
  }
}

static int sh(const char *fmt, const char *a, const char *b) {
  char cmd[2048];
  snprintf(cmd, sizeof(cmd), fmt, a, b);
  return system(cmd);
}

static char session[64], outdir[1024];

static int session_start(const char *work) {
  snprintf(session, sizeof(session), "htbench-%ld", (long)getpid());
  snprintf(outdir, sizeof(outdir), "%s/htbench-trace-%ld", work, (long)getpid());
  if (sh("timeout 30 lttng create %s --output=%s >/dev/null", session, outdir))
    return -1;
  if (sh("timeout 30 lttng enable-channel -u -s %s --overwrite --subbuf-size=1M "
         "--num-subbuf=8 htbench >/dev/null%s", session, "") ||
      sh("timeout 30 lttng enable-event -u -s %s -c htbench "
         "'hoptrace:*,htbench:*' >/dev/null%s", session, "") ||
      sh("timeout 30 lttng start %s >/dev/null%s", session, ""))
    return -1;
  /* The session daemon pushes the enablers to us asynchronously. */
  for (int i = 0; i < 500 && !lttng_ust_tracepoint_enabled(htbench, hop_raw); i++)
    usleep(10000);
  usleep(200000);
  return lttng_ust_tracepoint_enabled(htbench, hop_raw) ? 0 : -1;
}

static void session_end(void) {
  sh("timeout 60 lttng destroy %s >/dev/null%s", session, "");
  sh("rm -rf '%s'%s", outdir, "");
}

typedef struct figures {
  double raw_off, hop_off, triple_unsampled, child_unsampled, triple_sampled_off;
  double raw_on, hop_on, triple_sampled_on;
  int recorded;
} figures;

static void report(bench_report *f, const figures *x) {
  bench_report_line(f, "iterations: %u x best of %d\n", ITERS, ROUNDS);
  bench_report_line(f, "provider: %s\n",
          ht_tracing_provider_state() == HT_PROVIDER_LOADED ? "loaded" : "NOT loaded");
  bench_report_line(f, "%-52s %10s\n", "case", "ns/op");
  bench_report_line(f, "%-52s %10.2f\n", "disabled tracepoint, raw (no session)", x->raw_off);
  bench_report_line(f, "%-52s %10.2f\n", "hop event via sampled span (no session)", x->hop_off);
  bench_report_line(f, "%-52s %10.2f\n", "root span start+annotate+finish, unsampled",
          x->triple_unsampled);
  bench_report_line(f, "%-52s %10.2f\n", "child span start+annotate+finish, unsampled",
          x->child_unsampled);
  bench_report_line(f, "%-52s %10.2f\n", "root span start+annotate+finish, sampled, no session",
          x->triple_sampled_off);
  if (x->recorded) {
    bench_report_line(f, "%-52s %10.2f\n", "raw LTTng event, recording (floor)", x->raw_on);
    bench_report_line(f, "%-52s %10.2f\n", "hop event via span API, recording", x->hop_on);
    bench_report_line(f, "%-52s %10.2f\n", "root span start+annotate+finish, sampled, recording",
            x->triple_sampled_on);
    bench_report_line(f, "ratio hop/raw (recording): %.3f  (goal <= 1.3)\n", x->hop_on / x->raw_on);
  } else {
    bench_report_line(f, "recording figures: n/a (no LTTng session could be started)\n");
  }
  bench_report_line(f, "disabled tracepoint: %.2f ns  (goal <= 2 ns)\n", x->raw_off);
  bench_report_line(f, "ratio sampled/unsampled span triple (no session): %.2f\n",
          x->triple_sampled_off / x->triple_unsampled);
}

int main(int argc, char **argv) {
  const char *work = argc > 1 ? argv[1] : ".";
  ht_tracing_init();
  figures x = {0};
  ht_span_init(&sampled_span);
  ht_span_start_root(&sampled_span, &info, HT_SAMPLE_YES);

  x.raw_off = measure(raw_event);
  x.hop_off = measure(hop_event);
  use_sampler(HT_SAMPLER_NEVER);
  x.triple_unsampled = measure(span_triple);
  ht_span_init(&unsampled_parent);
  ht_span_start_root(&unsampled_parent, &info, HT_SAMPLE_NO);
  x.child_unsampled = measure(child_triple);
  use_sampler(HT_SAMPLER_ALWAYS);
  x.triple_sampled_off = measure(span_triple);

  if (session_start(work) == 0) {
    x.recorded = 1;
    x.raw_on = measure(raw_event);
    x.hop_on = measure(hop_event);
    x.triple_sampled_on = measure(span_triple);
  }
  if (session[0])
    session_end();

  bench_report *r = bench_report_open("propagate");
  report(r, &x);
  bench_report_close(r);
  return 0;
}
