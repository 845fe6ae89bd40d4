/* The report's capture section (report_capture.h). Memory is bounded:
 * 32 processes and 10 partial traces kept, the rest counted. Trace
 * strings (services, hosts, reasons) are a peer's bytes: escaped. */
#include "output/report_capture.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "output/utf8.h"

typedef struct fired_by {
  char text[160]; /* "service (host H, pid P)" */
  uint64_t traces;
} fired_by;

struct report_capture {
  fired_by procs[REPORT_CAPTURE_PROCS];
  size_t n_procs;
  uint64_t other_procs; /* traces fired by processes past the table */
  uint64_t notices_only; /* captured traces whose firing process is not in the input */
  char partial[REPORT_CAPTURE_PARTIAL][INCOMPLETE_REASON_MAX + 48];
  size_t n_partial;
  uint64_t more_partial;
};

report_capture *report_capture_new(void) { return calloc(1, sizeof(report_capture)); }

void report_capture_free(report_capture *rc) { free(rc); }

void report_capture_add(report_capture *rc, const trace *t) {
  const capture_info *c = t->capture;
  if (c == NULL)
    return;
  if (c->triggers == 0) {
    rc->notices_only++;
  } else {
    char text[160];
    snprintf(text, sizeof(text), "%s (host %s, pid %" PRId32 ")", c->origin[0] ? c->origin : "?",
             c->host[0] ? c->host : "?", c->pid);
    size_t i = 0;
    while (i < rc->n_procs && strcmp(rc->procs[i].text, text) != 0)
      i++;
    if (i == rc->n_procs && rc->n_procs < REPORT_CAPTURE_PROCS)
      memcpy(rc->procs[rc->n_procs++].text, text, sizeof(text));
    if (i < rc->n_procs)
      rc->procs[i].traces++;
    else
      rc->other_procs++;
  }
  if (!t->incomplete)
    return;
  if (rc->n_partial == REPORT_CAPTURE_PARTIAL) {
    rc->more_partial++;
    return;
  }
  char id[40], why[INCOMPLETE_REASON_MAX];
  snprintf(id, sizeof(id), "%016" PRIx64 "%016" PRIx64, t->trace_hi, t->trace_lo);
  snprintf(rc->partial[rc->n_partial++], sizeof(rc->partial[0]), "%s: %s", id,
           trace_incomplete_reason(t, why, sizeof(why)));
}

static void escaped_line(obuf *out, const char *indent, const char *text, uint64_t n) {
  ob_puts(out, indent);
  text_escaped(out, text, strlen(text), false);
  for (size_t pad = strlen(text); pad < 48; pad++)
    ob_putc(out, ' ');
  ob_printf(out, " %" PRIu64 "\n", n);
}

static void print_file(obuf *out, const capture_counts *c) {
  ob_puts(out, "  ");
  text_escaped(out, c->path, strlen(c->path), false);
  ob_puts(out, ":\n    ");
  const struct { const char *name; int64_t v; } f[] = {
      {"triggers fired", c->triggers_fired}, {"snapshots", c->snapshots},
      {"coalesced", c->coalesced}, {"rate-limited", c->rate_limited},
      {"dropped", c->dropped}, {"daemon-dropped", c->daemon_dropped},
      {"tracers-discarded", c->tracer_discarded}, {"snapshot failures", c->snapshot_failures}};
  for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
    if (f[i].v < 0 && i == 6)
      continue; /* a recorder before it counted them */
    if (f[i].v < 0)
      ob_printf(out, "%s%s ?", i ? ", " : "", f[i].name);
    else
      ob_printf(out, "%s%s %" PRId64, i ? ", " : "", f[i].name, f[i].v);
  }
  ob_putc(out, '\n');
  if (c->p50_ms >= 0 || c->p99_ms >= 0) {
    ob_puts(out, "    trigger to snapshot: p50 ");
    if (c->p50_ms >= 0) ob_printf(out, "%g ms", c->p50_ms); else ob_puts(out, "?");
    ob_puts(out, ", p99 ");
    if (c->p99_ms >= 0) ob_printf(out, "%g ms", c->p99_ms); else ob_puts(out, "?");
    ob_putc(out, '\n');
  }
}

void report_capture_print(const report_capture *rc, obuf *out, const assembler_stats *st,
                          const bt_source_stats *src, const capture_files *files) {
  bool have_files = files != NULL && files->n + files->unreadable > 0;
  if (st->captured_traces == 0 && !have_files)
    return;
  ob_printf(out, "\nCaptures (flight recorder)\n");
  if (src->flight)
    ob_printf(out, "  events of overlapping snapshots read once: %" PRIu64
                   " copies skipped\n", src->duplicate_events);
  ob_printf(out, "  triggers by reason (capture events of the process that fired):\n");
  static const uint8_t order[] = {HOP_CAPTURE_SLOW_CLIENT, HOP_CAPTURE_ERROR,
                                  HOP_CAPTURE_SLOW_SERVER, HOP_CAPTURE_MANUAL, 0};
  for (size_t i = 0; i < sizeof(order); i++)
    if (order[i] != 0 || st->triggers[0] > 0)
      ob_printf(out, "    %-20s %8" PRIu64 "\n", capture_reason(order[i]),
                st->triggers[order[i]]);
  ob_printf(out, "  capture notices answered (processes a notice reached): %" PRIu64 "\n",
            st->notices);
  ob_printf(out, "  captured traces: %" PRIu64 " (%" PRIu64 " complete, %" PRIu64 " partial)\n",
            st->captured_traces, st->captured_complete, st->captured_partial);
  if (rc->n_procs + rc->other_procs + rc->notices_only > 0) {
    ob_printf(out, "  captured traces by the process whose trigger fired:\n");
    for (size_t i = 0; i < rc->n_procs; i++)
      escaped_line(out, "    ", rc->procs[i].text, rc->procs[i].traces);
    if (rc->other_procs)
      escaped_line(out, "    ", "(other processes)", rc->other_procs);
    if (rc->notices_only)
      escaped_line(out, "    ", "(not in the input: only its notices are)", rc->notices_only);
  }
  if (rc->n_partial > 0) {
    ob_printf(out, "  partial traces, what is missing and where:\n");
    for (size_t i = 0; i < rc->n_partial; i++) {
      ob_puts(out, "    ");
      text_escaped(out, rc->partial[i], strlen(rc->partial[i]), false);
      ob_putc(out, '\n');
    }
    if (rc->more_partial)
      ob_printf(out, "    and %" PRIu64 " more\n", rc->more_partial);
  }
  if (!have_files) {
    ob_printf(out, "  no capture.json beside the snapshots: the recorder's counters"
                   " (snapshots, coalesced, rate-limited, dropped) unknown\n");
    return;
  }
  ob_printf(out, "  the recorder's counters (capture.json):\n");
  for (size_t i = 0; i < files->n; i++)
    print_file(out, &files->files[i]);
  if (files->unreadable)
    ob_printf(out, "  %zu capture.json file(s) unreadable or past %d\n", files->unreadable,
              CAPTURE_JSON_MAX_FILES);
}
