/* The report's slowest traces (report_slowest.h). */
#include "output/report_slowest.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/report_critical.h"
#include "output/report_groups.h"
#include "output/utf8.h"
#include "read/event.h"

#define PATH_MAX_LINES 16
#define GAPS_MAX 4

/* A request or reply phase of one hop: network and queues. */
typedef struct gap {
  int64_t ns, at_ns, correction_ns; /* correction: -1 bound = none */
  bool corrected, reply;
  char text[192];
} gap;

typedef struct slow_trace {
  int64_t duration, start_ns, end_ns; /* end: its last span's */
  char id[40];
  char path[PATH_MAX_LINES][160];
  int lines;
  int incomplete;
  gap gaps[GAPS_MAX]; /* the largest, largest first */
  int n_gaps;
} slow_trace;

struct report_slowest {
  slow_trace slowest[REPORT_SLOWEST];
  int n;
  cp_scratch scratch;
};

static const char *or_unknown(const char *s) { return s ? s : "?"; }
static const char *host_name(const span *s) { return s->hostname ? s->hostname : ""; }
static double us(int64_t ns) { return (double)ns / 1000.0; }

report_slowest *report_slowest_new(void) { return calloc(1, sizeof(report_slowest)); }

void report_slowest_free(report_slowest *o) {
  if (o != NULL)
    cp_scratch_free(&o->scratch);
  free(o);
}

static void path_line(void *user, const span *s, int depth, int64_t lo, int64_t hi) {
  (void)lo;
  (void)hi;
  slow_trace *out = user;
  if (out->lines < PATH_MAX_LINES)
    snprintf(out->path[out->lines++], sizeof(out->path[0]), "%*s%s %s/%s %.1f us",
             depth * 2, "", depth ? "`-" : "", or_unknown(s->service),
             or_unknown(s->name), (double)span_duration_ns(s) / 1000.0);
}

static void no_segment(void *user, const span *s, const span *server, int phase, int64_t ns) {
  (void)user, (void)s, (void)server, (void)phase, (void)ns;
}

/* The spans on the path (report_critical.h), the last to finish first. */
static int critical_path(report_slowest *o, const trace *t, slow_trace *out) {
  cp_visitor v = {path_line, no_segment, out};
  cp_stats unused = {0};
  return cp_walk(t, &v, &unused, &o->scratch);
}

/* Keeps g among st's GAPS_MAX largest gaps, largest first. */
static void keep_gap(slow_trace *st, const gap *g) {
  int at = st->n_gaps;
  while (at > 0 && st->gaps[at - 1].ns < g->ns)
    at--;
  if (at == GAPS_MAX)
    return;
  int last = st->n_gaps < GAPS_MAX ? st->n_gaps++ : GAPS_MAX - 1;
  memmove(&st->gaps[at + 1], &st->gaps[at], (size_t)(last - at) * sizeof(gap));
  st->gaps[at] = *g;
}

/* The request (cs -> sr) and reply (ss -> cr) phases of each hop of t:
 * how long, when (cs or ss), and the clock correction between the two
 * sides when their hosts differ and clocks were aligned. */
static void find_gaps(const trace *t, slow_trace *st) {
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *srv = t->spans[i], *cli = srv->parent;
    if (srv->kind != HOP_KIND_SERVER || cli == NULL || cli->kind != HOP_KIND_CLIENT ||
        !srv->started)
      continue;
    int64_t cs = report_mark(cli, "cs", 0), sr = report_mark(srv, "sr", 0);
    int64_t ss = report_mark(srv, "ss", 1), cr = report_mark(cli, "cr", 1);
    gap g = {.corrected = cli->clock_bound_ns >= 0 && srv->clock_bound_ns >= 0 &&
                          strcmp(host_name(cli), host_name(srv)) != 0};
    g.correction_ns = ns_diff(srv->clock_shift_ns, cli->clock_shift_ns);
    for (int reply = 0; reply < 2; reply++) {
      if (reply && !(cli->ended && srv->ended))
        continue;
      g.ns = reply ? ns_diff(cr, ss) : ns_diff(sr, cs);
      g.at_ns = reply ? ss : cs;
      snprintf(g.text, sizeof(g.text), "%s -> %s %s", or_unknown(cli->service),
               or_unknown(srv->service), or_unknown(srv->name));
      g.reply = reply;
      keep_gap(st, &g);
    }
  }
}

int report_slowest_add(report_slowest *o, const trace *t) {
  int64_t duration = 0;
  for (size_t i = 0; i < t->n_roots; i++)
    if (span_duration_ns(t->roots[i]) > duration)
      duration = span_duration_ns(t->roots[i]);
  int slot = o->n < REPORT_SLOWEST ? o->n++ : -1;
  if (slot < 0) {
    slot = 0;
    for (int i = 1; i < REPORT_SLOWEST; i++)
      if (o->slowest[i].duration < o->slowest[slot].duration)
        slot = i;
    if (o->slowest[slot].duration >= duration)
      return 0;
  }
  slow_trace *st = &o->slowest[slot];
  memset(st, 0, sizeof(*st));
  st->duration = duration;
  st->incomplete = t->incomplete;
  snprintf(st->id, sizeof(st->id), "%016" PRIx64 "%016" PRIx64, t->trace_hi, t->trace_lo);
  int rc = critical_path(o, t, st);
  st->start_ns = INT64_MAX;
  st->end_ns = INT64_MIN;
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    if (s->started && s->start_ns < st->start_ns)
      st->start_ns = s->start_ns;
    if (s->ended && s->end_ns > st->end_ns)
      st->end_ns = s->end_ns;
  }
  find_gaps(t, st);
  return rc;
}

/* The trace's start and its largest network/queue gaps: when each
 * happened (from the trace's start) and the clock correction between
 * its two hosts. */
static void print_gaps(obuf *out, const slow_trace *st) {
  char when[48];
  report_utc(st->start_ns, when, sizeof(when));
  ob_printf(out, "  started %s; largest network+queue gaps:\n", when);
  for (int i = 0; i < st->n_gaps; i++) {
    const gap *g = &st->gaps[i];
    ob_printf(out, "    %-17s %10.1f us at +%.1f us  ", g->reply ? "reply net+queue" : "request net+queue",
              us(g->ns), us(ns_diff(g->at_ns, st->start_ns)));
    text_escaped(out, g->text, strlen(g->text), false);
    if (g->corrected)
      ob_printf(out, "  (clock correction between the hosts: %+.3f us)", us(g->correction_ns));
    ob_putc(out, '\n');
  }
}

static int cmp_slow(const void *a, const void *b) {
  int64_t x = ((const slow_trace *)a)->duration, y = ((const slow_trace *)b)->duration;
  return (x < y) - (x > y);
}

/* Slow traces that all ran at one moment point at the machine (CPU,
 * memory, disk, a pause of the process), not at a hop: said once. */
static void print_moment(obuf *out, const slow_trace *st, int n) {
  int64_t first = INT64_MAX, last = INT64_MIN, end = INT64_MAX;
  for (int i = 0; i < n; i++) {
    if (st[i].start_ns == INT64_MAX || st[i].end_ns == INT64_MIN)
      return;
    first = st[i].start_ns < first ? st[i].start_ns : first;
    last = st[i].start_ns > last ? st[i].start_ns : last;
    end = st[i].end_ns < end ? st[i].end_ns : end;
  }
  if (n < 2 || last > end)
    return;
  char when[48];
  report_utc(last, when, sizeof(when));
  double d = (double)ns_diff(last, first);
  ob_printf(out, "all %d were running at one moment, %s (their starts within %.1f %s): slow"
                 " together, so look at the machine (CPU, memory, disk, a pause of the"
                 " process) before any one hop\n", n, when, d < 1e6 ? d / 1e3 : d / 1e6,
            d < 1e6 ? "us" : "ms");
}

void report_slowest_print(report_slowest *o, obuf *out) {
  qsort(o->slowest, (size_t)o->n, sizeof(slow_trace), cmp_slow);
  ob_printf(out, "\nSlowest traces and their critical path\n");
  for (int i = 0; i < o->n; i++) {
    const slow_trace *st = &o->slowest[i];
    ob_printf(out, "trace %s  %.1f us%s\n", st->id, us(st->duration),
              st->incomplete ? "  [incomplete]" : "");
    for (int l = 0; l < st->lines; l++) {
      ob_puts(out, "  ");
      text_escaped(out, st->path[l], strlen(st->path[l]), false);
      ob_putc(out, '\n');
    }
    print_gaps(out, st);
  }
  print_moment(out, o->slowest, o->n);
}
