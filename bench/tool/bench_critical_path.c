/* The report's aggregate critical path (report_cpagg.h) over 100,000
 * traces built in memory: a write (client -> primary -> two of four
 * replicas, one OSD slow on 1 % of its writes) and a read, durations
 * spread over three orders of magnitude. Prints the time to add them and
 * to print the section, and the process's peak memory: the aggregate
 * keeps per key and duration class, so memory does not grow with the
 * traces. Then `hoptrace diff`'s figures over the same traces (keeping
 * them, comparing the slowest 1 % to the rest, and the two halves).
 * Written to bench/results/critical-path.txt. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_report.h"
#include "diff/diff_stats.h"
#include "output/report_cpagg.h"
#include "read/event.h"

#define TRACES 100000

typedef struct write {
  span c, s, r1, s1, r2, s2;
  span *spans[6], *roots[1];
  span *c_kids[1], *s_kids[2], *r1_kids[1], *r2_kids[1];
  trace t;
} write;

static const char *const osds[] = {"osd.0", "osd.1", "osd.2", "osd.3"};

static uint64_t rng = 88172645463325252ull;
static int64_t rnd(int64_t n) { /* xorshift: the same traces every run */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (int64_t)(rng % (uint64_t)n);
}

static span mk(uint64_t id, const char *svc, const char *name, int kind, int64_t a, int64_t b) {
  return (span){.id = id, .service = svc, .name = name, .kind = (int8_t)kind, .start_ns = a,
                .end_ns = b, .clock_bound_ns = -1, .started = true, .ended = true};
}

static void link(span *parent, span **kids, span *a, span *b) {
  parent->children = kids;
  kids[0] = a;
  a->parent = parent;
  parent->n_children = 1;
  if (b != NULL) {
    kids[1] = b;
    b->parent = parent;
    parent->n_children = 2;
  }
}

/* Trace i: a write (3 of 4) or a read; times in ns from t0. */
static void make(write *w, int i, int64_t t0) {
  memset(w, 0, sizeof(*w));
  int p = (int)rnd(4), a = (p + 1) % 4, b = (p + 2) % 4;
  int64_t net = 20000 + rnd(20000), svc = 50000 + rnd(100000);
  int64_t ra = 30000 + rnd(50000), rb = 30000 + rnd(50000);
  if (b == 3 && rnd(100) == 0) /* osd.3's disk is slow sometimes */
    rb += 10000000;
  if (rnd(10) == 0) /* a busy primary now and then */
    svc *= 1 + rnd(30);
  int read = i % 4 == 0;
  int64_t s0 = t0 + net, r0 = s0 + svc / 2;
  int64_t ea = r0 + net + ra + net, eb = r0 + 1000 + net + rb + net;
  int64_t s_end = read ? s0 + svc : (ea > eb ? ea : eb) + svc / 2;
  const char *op = read ? "osd_read" : "osd_write";
  w->c = mk(1, "client", op, HOP_KIND_CLIENT, t0, s_end + net);
  w->s = mk(2, osds[p], op, HOP_KIND_SERVER, s0, s_end);
  link(&w->c, w->c_kids, &w->s, NULL);
  size_t n = 2;
  if (!read) {
    w->r1 = mk(3, osds[p], "replica_write", HOP_KIND_CLIENT, r0, ea);
    w->s1 = mk(4, osds[a], "replica_write", HOP_KIND_SERVER, r0 + net, ea - net);
    w->r2 = mk(5, osds[p], "replica_write", HOP_KIND_CLIENT, r0 + 1000, eb);
    w->s2 = mk(6, osds[b], "replica_write", HOP_KIND_SERVER, r0 + 1000 + net, eb - net);
    link(&w->s, w->s_kids, &w->r1, &w->r2);
    link(&w->r1, w->r1_kids, &w->s1, NULL);
    link(&w->r2, w->r2_kids, &w->s2, NULL);
    n = 6;
  }
  span *all[6] = {&w->c, &w->s, &w->r1, &w->s1, &w->r2, &w->s2};
  memcpy(w->spans, all, sizeof(all));
  w->roots[0] = &w->c;
  w->t = (trace){.spans = w->spans, .n_spans = n, .roots = w->roots, .n_roots = 1,
                 .root_prob = UINT64_C(1) << 30}; /* p = 0.25 */
}

/* hoptrace diff over the same traces: kept (diff_set.h), then their
 * slowest 1 % against the rest and their two halves compared (1,000
 * resamples). The seconds of all three, -1 on failure. */
static double bench_diff(bench_report *r) {
  diff_keys keys;
  diff_set s;
  diff_keys_init(&keys);
  diff_set_init(&s, &keys);
  rng = 88172645463325252ull;
  write w;
  uint64_t build = 0, t = bench_now_ns();
  for (int i = 0; i < TRACES; i++) {
    uint64_t b = bench_now_ns();
    make(&w, i, (int64_t)i * 1000000);
    w.t.trace_lo = (uint64_t)i;
    build += bench_now_ns() - b;
    if (diff_set_add(&s, &w.t) != 0)
      return -1;
  }
  uint64_t kept = bench_now_ns() - t - build, compared[2];
  for (int split = 0; split < 2; split++) {
    diff_view a, b;
    diff_result res;
    t = bench_now_ns();
    if ((split ? diff_view_split_halves(&s, &a, &b) : diff_view_split_tail(&s, 0.99, &a, &b)) != 0 ||
        diff_compare(&a, &b, 1000, 1, &res) != 0)
      return -1;
    compared[split] = bench_now_ns() - t;
    diff_result_free(&res);
    diff_view_free(&a);
    diff_view_free(&b);
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  bench_report_line(r, "hoptrace diff: the same %d traces\n", TRACES);
  bench_report_line(r, "  keep:          %8.3f s  (%.2f us a trace)\n", kept / 1e9,
                    kept / 1e3 / TRACES);
  bench_report_line(r, "  --split p99:   %8.3f s  (1,000 resamples)\n", compared[0] / 1e9);
  bench_report_line(r, "  --split halves:%8.3f s  (1,000 resamples)\n", compared[1] / 1e9);
  bench_report_line(r, "  peak RSS of the process after it: %ld KiB\n", ru.ru_maxrss);
  diff_set_free(&s);
  diff_keys_free(&keys);
  return (kept + compared[0] + compared[1]) / 1e9;
}

int main(void) {
  bench_report *r = bench_report_open("critical-path");
  if (r == NULL)
    return 1;
  cp_agg *a = cp_agg_new();
  if (a == NULL)
    return 1;
  write w;
  uint64_t build = 0, t = bench_now_ns();
  for (int i = 0; i < TRACES; i++) {
    uint64_t b = bench_now_ns();
    make(&w, i, (int64_t)i * 1000000);
    build += bench_now_ns() - b;
    if (cp_agg_add(a, &w.t) != 0)
      return 1;
  }
  uint64_t added = bench_now_ns() - t - build;
  FILE *devnull = fopen("/dev/null", "w");
  obuf *out = devnull ? obuf_new(devnull) : NULL;
  if (out == NULL)
    return 1;
  t = bench_now_ns();
  cp_agg_print(a, out);
  cp_agg_json(a, out);
  uint64_t printed = bench_now_ns() - t;
  obuf_flush(out);
  obuf_free(out);
  fclose(devnull);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  bench_report_line(r, "aggregate critical path: %d traces (writes and reads, 4 OSDs)\n",
                    TRACES);
  bench_report_line(r, "  add:   %8.3f s  (%.0f traces/s, %.2f us a trace)\n", added / 1e9,
                    TRACES / (added / 1e9), added / 1e3 / TRACES);
  bench_report_line(r, "  print: %8.3f s  (text and JSON)\n", printed / 1e9);
  bench_report_line(r, "  total: %8.3f s  (target: <= 5 s)\n", (added + printed) / 1e9);
  bench_report_line(r, "  peak RSS of the process: %ld KiB\n", ru.ru_maxrss);
  double diff_s = bench_diff(r);
  obuf *so = obuf_new(stdout);
  if (so != NULL) {
    cp_agg_print(a, so);
    obuf_flush(so);
    obuf_free(so);
  }
  cp_agg_free(a);
  bench_report_close(r);
  return added + printed <= 5000000000ull && diff_s >= 0 && diff_s <= 5 ? 0 : 1;
}
