/* The assembler and the exporters on a trace's shape: a million spans
 * each the previous one's child (a chain) against a million spans under
 * one root (flat). Both must cost about the same: nothing may walk to the
 * root from every span. Events go straight into the assembler (no LTTng,
 * no babeltrace2): what is measured is the tool's own work.
 * Run: build/bench/assemble/bench_assemble [spans] */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "assemble/assemble.h"
#include "bench_report.h"
#include "output/output.h"

typedef struct sink {
  const output_format *fmt;
  output *o;
} sink;

static void on_ready(void *user, const trace *t) {
  sink *s = user;
  s->fmt->trace(s->o, t);
}

/* Seconds to assemble and export one trace of n spans; chain: span i's
 * parent is span i - 1, else every span's parent is span 1. */
static double run(const output_format *fmt, size_t n, int chain) {
  FILE *devnull = fopen("/dev/null", "w");
  if (devnull == NULL)
    return -1;
  obuf *ob = obuf_new(devnull);
  output_info info = {0};
  sink s = {fmt, fmt->open(ob, &info)};
  assembler *a = assembler_new(on_ready, &s, 0, 0);
  uint64_t t0 = bench_now_ns();
  for (uint64_t i = 1; i <= n; i++) {
    uint64_t parent = i == 1 ? 0 : chain ? i - 1 : 1;
    hop_event e = {.kind = HOP_SPAN_SIDE, .ts_ns = (int64_t)(1000 + 2 * n - i),
                   .start_ns = (int64_t)(1000 + i), .trace_lo = 7, .span_id = i,
                   .parent_id = parent, .vpid = 1, .vtid = 1, .procname = "p",
                   .hostname = "h", .name = "op", .service = "svc", .endpoint = "",
                   .annotation = "", .end_annotation = "", .peer = ""};
    if (assembler_add(a, &e) != 0)
      return -1;
  }
  assembler_flush(a);
  bt_source_stats src = {0};
  fmt->close(s.o, &src, assembler_get_stats(a));
  double secs = (double)(bench_now_ns() - t0) / 1e9;
  assembler_free(a);
  obuf_free(ob);
  fclose(devnull);
  return secs;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
  const output_format *fmts[] = {&output_zipkin, &output_otlp, &output_chrome, &output_report};
  bench_report *r = bench_report_open("assemble");
  if (r == NULL)
    return 1;
  bench_report_line(r, "%-8s %8s %12s %12s %8s\n", "format", "spans", "flat s", "chain s",
                    "ratio");
  int ok = 1;
  for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
    double flat = run(fmts[f], n, 0), chain = run(fmts[f], n, 1);
    if (flat < 0 || chain < 0)
      return 1;
    double ratio = chain / flat;
    ok &= ratio <= 2.0;
    bench_report_line(r, "%-8s %8zu %12.2f %12.2f %8.2f\n", fmts[f]->name, n, flat, chain,
                      ratio);
  }
  bench_report_line(r, "\nchain within 2x of flat in every format: %s\n", ok ? "met" : "NOT met");
  /* a shared machine's load moves each figure by 2x or more: say it */
  char load[64] = "?";
  FILE *f = fopen("/proc/loadavg", "r");
  if (f != NULL) {
    if (fgets(load, sizeof(load), f) == NULL)
      snprintf(load, sizeof(load), "?\n");
    fclose(f);
  }
  bench_report_line(r, "load average at the end (/proc/loadavg): %s", load);
  bench_report_close(r);
  return ok ? 0 : 1;
}
