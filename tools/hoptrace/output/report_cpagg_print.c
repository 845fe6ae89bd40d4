/* The aggregate critical path as the report prints it and as JSON
 * (report_cpagg.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/json.h"
#include "output/report_cpagg.h"
#include "output/report_critical.h"
#include "output/utf8.h"

#define ROW_MIN_PCT 0.5 /* smaller rows are summed in one line (all of them in the JSON) */

typedef void op_writer(obuf *out, size_t i, const cp_op_summary *s, const cp_row *rows,
                       size_t n);

static void each_op(const cp_agg *a, obuf *out, op_writer *write) {
  for (size_t i = 0; i < cp_agg_ops(a); i++) {
    cp_op_summary s;
    cp_row *rows;
    size_t n;
    cp_agg_op(a, i, &s, &rows, &n);
    write(out, i, &s, rows, n);
    free(rows);
  }
}

static double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }

static void print_op(obuf *out, size_t i, const cp_op_summary *s, const cp_row *rows, size_t n) {
  (void)i;
  ob_puts(out, "operation ");
  text_escaped(out, s->name, strlen(s->name), false);
  ob_printf(out, ": %" PRIu64 " traces (est. %.0f%s), mean %.1f us; slowest 1 %%: est. %.1f"
                 " traces from %.1f us, mean %.1f us\n",
            s->traces, s->est, s->unknown_p ? ", some of unknown p counted once" : "",
            s->est > 0 ? s->e2e_ns / s->est / 1000 : 0, s->tail_est,
            (double)s->tail_from_ns / 1000, s->tail_est > 0 ? s->tail_e2e_ns / s->tail_est / 1000 : 0);
  ob_printf(out, "  %8s %11s  %s\n", "all", "slowest 1%", "service operation: phase");
  double all = 0, tail = 0, small_all = 0, small_tail = 0;
  size_t small = 0;
  for (size_t r = 0; r < n; r++) {
    double pa = pct(rows[r].all_ns, s->e2e_ns), pt = pct(rows[r].tail_ns, s->tail_e2e_ns);
    all += pa;
    tail += pt;
    if (pa < ROW_MIN_PCT && pt < ROW_MIN_PCT) {
      small++;
      small_all += pa;
      small_tail += pt;
      continue;
    }
    char label[400];
    snprintf(label, sizeof(label), "%s%s%s %s: %s", rows[r].service,
             rows[r].server ? " -> " : "", rows[r].server ? rows[r].server : "",
             rows[r].operation, cp_phase_names[rows[r].phase]);
    ob_printf(out, "  %7.1f%% %10.1f%%  ", pa, pt);
    text_escaped(out, label, strlen(label), false);
    ob_putc(out, '\n');
  }
  if (small)
    ob_printf(out, "  %7.1f%% %10.1f%%  (%zu more, under %.1f %% each)\n", small_all,
              small_tail, small, ROW_MIN_PCT);
  ob_printf(out, "  %7.1f%% %10.1f%%  total\n", all, tail);
}

void cp_agg_print(const cp_agg *a, obuf *out) {
  ob_printf(out, "\nAggregate critical path per operation (root span): the share of end-to-end"
                 " time each\n(service, operation, phase) holds on the critical path, all traces"
                 " and the slowest 1 %%,\nweighted by 1/p (a trace of unknown p once); hops on"
                 " one clock when clocks were aligned\n");
  if (cp_agg_ops(a) == 0)
    ob_printf(out, "  no trace with a root of non-zero duration\n");
  each_op(a, out, print_op);
  cp_agg_count c;
  cp_agg_counts(a, &c);
  if (c.stats.clamped)
    ob_printf(out, "  %" PRIu64 " child span(s) outside their parent (clocks of two hosts,"
                   " or a detached child): clamped to it, %.1f us cut off and left out\n",
              c.stats.clamped, (double)c.stats.clamped_ns / 1000);
  if (c.stats.too_deep)
    ob_printf(out, "  %" PRIu64 " span(s) deeper than %d: their children's time counted as"
                   " their own\n", c.stats.too_deep, CP_DEPTH_MAX);
  if (c.no_root)
    ob_printf(out, "  %" PRIu64 " trace(s) without a root of non-zero duration: not counted\n",
              c.no_root);
  if (c.dropped)
    ob_printf(out, "  %" PRIu64 " sample(s) not kept (out of memory or %u cells): shares"
                   " may not add up\n", c.dropped, c.cells_max);
}

static void json_num(obuf *out, const char *name, double v) {
  ob_printf(out, ",\"%s\":%.17g", name, v);
}

static void json_op(obuf *out, size_t i, const cp_op_summary *s, const cp_row *rows, size_t n) {
  ob_puts(out, i ? ",\n{\"operation\":" : "\n{\"operation\":");
  json_string(out, s->name);
  ob_printf(out, ",\"traces\":%" PRIu64 ",\"unknown_p\":%" PRIu64, s->traces, s->unknown_p);
  json_num(out, "estimated_traces", s->est);
  json_num(out, "end_to_end_ns", s->e2e_ns);
  ob_puts(out, ",\"slowest_1pct\":{\"from_ns\":");
  json_i64(out, s->tail_from_ns);
  json_num(out, "estimated_traces", s->tail_est);
  json_num(out, "end_to_end_ns", s->tail_e2e_ns);
  ob_puts(out, "},\"rows\":[");
  for (size_t r = 0; r < n; r++) {
    ob_puts(out, r ? ",\n {\"service\":" : "\n {\"service\":");
    json_string(out, rows[r].service);
    if (rows[r].server) {
      ob_puts(out, ",\"server\":");
      json_string(out, rows[r].server);
    }
    ob_puts(out, ",\"operation\":");
    json_string(out, rows[r].operation);
    ob_puts(out, ",\"phase\":");
    json_string(out, cp_phase_names[rows[r].phase]);
    json_num(out, "share_all", s->e2e_ns > 0 ? rows[r].all_ns / s->e2e_ns : 0);
    json_num(out, "share_slowest_1pct", s->tail_e2e_ns > 0 ? rows[r].tail_ns / s->tail_e2e_ns : 0);
    json_num(out, "ns_all", rows[r].all_ns);
    json_num(out, "ns_slowest_1pct", rows[r].tail_ns);
    ob_putc(out, '}');
  }
  ob_puts(out, "]}");
}

void cp_agg_json(const cp_agg *a, obuf *out) {
  ob_puts(out, "{\"operations\":[");
  each_op(a, out, json_op);
  cp_agg_count c;
  cp_agg_counts(a, &c);
  ob_printf(out, "],\"clamped_children\":%" PRIu64 ",\"clamped_ns\":", c.stats.clamped);
  json_i64(out, c.stats.clamped_ns);
  ob_printf(out, ",\"too_deep\":%" PRIu64 ",\"traces_without_root\":%" PRIu64
                 ",\"samples_not_kept\":%" PRIu64 "}",
            c.stats.too_deep, c.no_root, c.dropped);
}
