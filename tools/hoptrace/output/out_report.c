/* `hoptrace report`: what it is built from, per-hop and per-phase latency
 * table, errors and timeouts of the hops that had any, degraded writes
 * per primary (report_degraded.h), per-operation and per-server roll-ups
 * (report_groups.h), the slowest traces with their critical path
 * and their largest network/queue gaps (report_slowest.h), the aggregate
 * critical path (report_cpagg.h), and what was lost. Keeps a
 * bounded histogram per hop and phase (latency_hist.h), not the traces
 * nor the samples: memory does not grow with the input. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/align.h"
#include "assemble/host_health.h"
#include "hoptrace/error.h"
#include "output/latency_hist.h"
#include "output/output.h"
#include "output/report_capture.h"
#include "output/report_cpagg.h"
#include "output/report_slowest.h"
#include "output/report_degraded.h"
#include "output/report_groups.h"
#include "output/utf8.h"
#include "read/limits.h"

typedef struct hop_row {
  char *label;
  latency_hist phase[4]; /* request, service, reply, round trip */
  uint64_t calls, errors, timeouts; /* client spans; either side's status */
  uint64_t unknown; /* calls of traces of unknown p */
  double est;       /* sum of 1/p over the others' calls */
} hop_row;

enum { PH_REQUEST, PH_SERVICE, PH_REPLY, PH_TOTAL };
static const char *const phase_names[] = {"request net+queue", "service",
                                          "reply net+queue", "round trip"};

/* RPCs between two hosts and the phases their clocks made negative. */
typedef struct host_pair {
  char *client_host, *server_host;
  uint64_t rpcs, negative_request, negative_reply;
} host_pair;

struct output {
  obuf *out;
  hop_row *rows;
  size_t n_rows;
  hop_row *fanout;
  size_t n_fanout;
  host_pair *pairs;
  size_t n_pairs;
  const output_info *info;
  report_groups *groups;
  report_degraded *degraded;
  report_capture *captures;
  uint64_t unmatched_client_spans;
  uint64_t unsent_client_spans; /* of those: never reached a server */
  uint64_t unrecorded_samples; /* out of memory: said in the report */
  report_slowest *slowest;
  cp_agg *cpagg;
};

static output *report_open(obuf *out, const output_info *info) {
  output *o = calloc(1, sizeof(*o));
  if (o != NULL && ((o->groups = report_groups_new()) == NULL ||
                    (o->degraded = report_degraded_new()) == NULL ||
                    (o->captures = report_capture_new()) == NULL ||
                    (o->cpagg = cp_agg_new()) == NULL ||
                    (o->slowest = report_slowest_new()) == NULL)) {
    cp_agg_free(o->cpagg);
    report_groups_free(o->groups);
    report_degraded_free(o->degraded);
    report_capture_free(o->captures);
    free(o);
    return NULL;
  }
  if (o != NULL) {
    o->out = out;
    o->info = info;
  }
  return o;
}

static void push(output *o, latency_hist *h, int64_t v) {
  /* v < 0: clocks of two hosts disagree, not a latency */
  if (latency_hist_add(h, v) < 0)
    o->unrecorded_samples++;
}

static hop_row *row_for(hop_row **rows, size_t *n, const char *label) {
  for (size_t i = 0; i < *n; i++)
    if (strcmp((*rows)[i].label, label) == 0)
      return &(*rows)[i];
  hop_row *grown = realloc(*rows, (*n + 1) * sizeof(hop_row));
  if (grown == NULL)
    return NULL;
  *rows = grown;
  hop_row *r = &grown[(*n)++];
  memset(r, 0, sizeof(*r));
  r->label = strdup(label);
  return r;
}

static const char *host_name(const span *s) { return s->hostname ? s->hostname : ""; }

static host_pair *pair_for(output *o, const span *client, const span *server) {
  for (size_t i = 0; i < o->n_pairs; i++)
    if (strcmp(o->pairs[i].client_host, host_name(client)) == 0 &&
        strcmp(o->pairs[i].server_host, host_name(server)) == 0)
      return &o->pairs[i];
  host_pair *grown = realloc(o->pairs, (o->n_pairs + 1) * sizeof(host_pair));
  if (grown == NULL)
    return NULL;
  o->pairs = grown;
  host_pair *p = &grown[o->n_pairs];
  *p = (host_pair){strdup(host_name(client)), strdup(host_name(server)), 0, 0, 0};
  if (p->client_host == NULL || p->server_host == NULL) {
    free(p->client_host);
    free(p->server_host);
    return NULL;
  }
  o->n_pairs++;
  return p;
}

/* A negative request or reply phase is two clocks disagreeing, not a
 * latency: counted per host pair and said, never put in the table. */
static void count_cross_host(output *o, const span *client, const span *server,
                             int64_t request, int64_t reply) {
  if (strcmp(host_name(client), host_name(server)) == 0)
    return;
  host_pair *p = pair_for(o, client, server);
  if (p == NULL)
    return;
  p->rpcs++;
  p->negative_request += server->started && request < 0;
  p->negative_reply += client->ended && server->ended && reply < 0;
}

static const char *or_unknown(const char *s) { return s ? s : "?"; }

/* The hop's row, with one call counted: an error when either side's
 * status is set, a timeout when it is HT_ETIMEDOUT. server NULL: the
 * client span has no server span (row "client -> ? operation"). */
static hop_row *count_call(output *o, const span *client, const span *server, double w) {
  char label[256];
  snprintf(label, sizeof(label), "%s -> %s %s", or_unknown(client->service),
           server ? or_unknown(server->service) : "?",
           or_unknown(server ? server->name : client->name));
  hop_row *r = row_for(&o->rows, &o->n_rows, label);
  if (r == NULL)
    return NULL;
  int32_t st = server && server->status != 0 ? server->status : client->status;
  bool timed_out = client->status == HT_ETIMEDOUT || (server && server->status == HT_ETIMEDOUT);
  r->calls++;
  r->est += w;
  r->unknown += w == 0;
  r->timeouts += timed_out;
  r->errors += st != 0 && !timed_out;
  return r;
}

static void measure_hop(output *o, const span *client, const span *server, double w) {
  hop_row *r = count_call(o, client, server, w);
  if (r == NULL)
    return;
  int64_t cs = report_mark(client, "cs", 0), cr = report_mark(client, "cr", 1);
  int64_t sr = report_mark(server, "sr", 0), ss = report_mark(server, "ss", 1);
  if (server->started)
    push(o, &r->phase[PH_REQUEST], ns_diff(sr, cs));
  if (server->started && server->ended)
    push(o, &r->phase[PH_SERVICE], ns_diff(ss, sr));
  if (client->ended && server->ended)
    push(o, &r->phase[PH_REPLY], ns_diff(cr, ss));
  if (client->started && client->ended)
    push(o, &r->phase[PH_TOTAL], ns_diff(cr, cs));
  count_cross_host(o, client, server, ns_diff(sr, cs), ns_diff(cr, ss));
}

static void measure_fanout(output *o, const span *server, double w) {
  int64_t first = 0, last = 0;
  size_t n = 0;
  for (size_t i = 0; i < server->n_children; i++) {
    const span *c = server->children[i];
    if (c->kind != HOP_KIND_CLIENT || !c->started || !c->ended)
      continue;
    if (n == 0 || c->start_ns < first)
      first = c->start_ns;
    if (n == 0 || c->end_ns > last)
      last = c->end_ns;
    n++;
  }
  if (n == 0)
    return;
  char label[256];
  snprintf(label, sizeof(label), "%s %s: first child sent -> last child answered",
           or_unknown(server->service), or_unknown(server->name));
  hop_row *r = row_for(&o->fanout, &o->n_fanout, label);
  if (r == NULL)
    return;
  r->calls++;
  r->est += w;
  r->unknown += w == 0;
  push(o, &r->phase[PH_TOTAL], ns_diff(last, first));
}

static void report_trace(output *o, const trace *t) {
  double w = trace_weight(t);
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    if (s->kind == HOP_KIND_SERVER && s->parent && s->parent->kind == HOP_KIND_CLIENT)
      measure_hop(o, s->parent, s, w);
    if (s->kind == HOP_KIND_CLIENT) {
      int matched = 0;
      for (size_t c = 0; c < s->n_children; c++)
        matched |= s->children[c]->kind == HOP_KIND_SERVER;
      o->unmatched_client_spans += !matched;
      o->unsent_client_spans += !matched && !span_reached_server(s);
      if (!matched) /* its errors and timeouts still count */
        count_call(o, s, NULL, w);
    }
    if (s->kind == HOP_KIND_SERVER)
      measure_fanout(o, s, w);
  }
  if (report_slowest_add(o->slowest, t) != 0)
    o->unrecorded_samples++;
  report_capture_add(o->captures, t);
  if (report_groups_add(o->groups, t) != 0 || report_degraded_add(o->degraded, t, w) != 0)
    o->unrecorded_samples++;
  cp_agg_add(o->cpagg, t); /* what it could not keep, it says itself */
}

static double us(int64_t ns) { return (double)ns / 1000.0; }

/* A line of trace strings (service, operation, host names): escaped, so
 * that a peer's bytes never reach a terminal as controls (utf8.h). */
static void line(obuf *out, const char *indent, const char *text) {
  ob_puts(out, indent);
  text_escaped(out, text, strlen(text), false);
  ob_putc(out, '\n');
}

static bool row_empty(const hop_row *r) {
  for (int p = 0; p < 4; p++)
    if (r->phase[p].count != 0)
      return false;
  return true;
}

/* The row's label alone on its line (scripts read it so), then how many
 * it counts, sampled and estimated. */
static void print_label(obuf *out, const hop_row *r, const char *what) {
  char est[48];
  report_estimate(est, sizeof(est), r->est, r->calls, r->unknown);
  line(out, "", r->label);
  ob_printf(out, "  %s: %" PRIu64 " sampled, est. %s\n", what, r->calls, est);
}

static void print_rows(obuf *out, hop_row *rows, size_t n, int first_phase) {
  for (size_t i = 0; i < n; i++) {
    if (row_empty(&rows[i])) /* a client span alone: errors and timeouts only */
      continue;
    print_label(out, &rows[i], first_phase == PH_TOTAL ? "server spans" : "calls");
    for (int p = first_phase; p <= PH_TOTAL; p++) {
      const latency_hist *h = &rows[i].phase[p];
      if (h->count == 0)
        continue;
      ob_printf(out, "  %-20s %8" PRIu64 " %10.1f %10.1f %10.1f %10.1f%s\n",
              first_phase == PH_TOTAL && n ? "wait" : phase_names[p], h->count,
              us(latency_hist_quantile(h, 0.5)), us(latency_hist_quantile(h, 0.9)),
              us(latency_hist_quantile(h, 0.99)), us(h->max), group_small_mark(h->count));
    }
  }
}

/* Only the hops that failed: a cluster's dozens of healthy hops would
 * hide the one that did not. */
static void print_errors(obuf *out, const hop_row *rows, size_t n) {
  size_t failing = 0;
  for (size_t i = 0; i < n; i++)
    failing += rows[i].errors + rows[i].timeouts > 0;
  if (failing == 0) {
    ob_printf(out, "\nErrors and timeouts per hop: no errors (%zu hop(s), none with an error or"
                   " a timeout on either side's status)\n", n);
    return;
  }
  ob_printf(out, "\nErrors and timeouts per hop: the %zu of %zu hop(s) that had any (client span"
                 " -> server span; \"?\": no server span), counted on either side's status\n",
            failing, n);
  ob_printf(out, "  %-48s %8s %8s %8s\n", "hop", "calls", "errors", "timeouts");
  for (size_t i = 0; i < n; i++) {
    const hop_row *r = &rows[i];
    if (r->errors + r->timeouts == 0)
      continue;
    ob_puts(out, "  ");
    text_escaped(out, r->label, strlen(r->label), false);
    for (size_t pad = strlen(r->label); pad < 48; pad++)
      ob_putc(out, ' ');
    ob_printf(out, " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 "\n", r->calls, r->errors, r->timeouts);
  }
}

static void free_rows(hop_row *rows, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(rows[i].label);
    for (int p = 0; p < 4; p++)
      latency_hist_free(&rows[i].phase[p]);
  }
  free(rows);
}

static void print_health(const void *info, FILE *f) {
  const output_info *i = info;
  host_health_print(i->hosts, i->stall_ns, f);
}
static void print_clock(const void *al, FILE *f) { clock_sync_print(align_clock(al), f); }

static void print_hosts(output *o) {
  obuf *out = o->out;
  const align_state *al = o->info != NULL ? o->info->align : NULL;
  const host_health *health = o->info != NULL ? o->info->hosts : NULL;
  if (health != NULL && host_health_count(health) > 1) {
    ob_printf(out, "\nPer host: events, LTTng losses, server spans it never recorded\n");
    text_printed(out, print_health, o->info);
  }
  if (o->n_pairs == 0 && al == NULL)
    return;
  ob_printf(out, "\nHost pairs: RPCs between hosts (client host -> server host) and the phases\n"
                 "their clocks made negative (not counted above: a clock offset, not a latency)\n");
  ob_printf(out, "  %-32s %10s %18s %18s\n", "pair", "RPCs", "negative request", "negative reply");
  uint64_t negative = 0;
  for (size_t i = 0; i < o->n_pairs; i++) {
    const host_pair *p = &o->pairs[i];
    char label[160];
    snprintf(label, sizeof(label), "%s -> %s", p->client_host, p->server_host);
    ob_puts(out, "  ");
    text_escaped(out, label, strlen(label), false);
    for (size_t pad = strlen(label); pad < 32; pad++)
      ob_putc(out, ' ');
    ob_printf(out, " %10" PRIu64 " %18" PRIu64 " %18" PRIu64 "\n", p->rpcs,
              p->negative_request, p->negative_reply);
    negative += p->negative_request + p->negative_reply;
  }
  if (al == NULL && negative > 0)
    ob_printf(out, "  %" PRIu64 " negative phases: these hosts' clocks disagree and were not"
                   " aligned (--align off); their request and reply phases above mix clock"
                   " offset into latency\n", negative);
  if (al == NULL)
    return;
  ob_printf(out, "\nClock alignment (times above are on the reference host's clock)\n");
  text_printed(out, print_clock, al);
}

static int report_close(output *o, const bt_source_stats *src, const assembler_stats *st) {
  obuf *out = o->out;
  ob_printf(out, "hoptrace report: %" PRIu64 " traces, %" PRIu64 " spans\n\n", st->traces, st->spans);
  report_groups_print_source(o->groups, out, o->info != NULL && o->info->align != NULL);
  ob_printf(out, "\nPer hop (client span -> server span), microseconds"
               " (quantiles within 0.4 %%, max exact)\n");
  ob_printf(out, "  (<100: fewer than 100 samples, their p99 is the max; a fan-out server's"
                 " service includes its children's round trips: see Fan-out; calls sampled"
                 " and estimated issued by 1/p as in Built from)\n");
  ob_printf(out, "  %-20s %8s %10s %10s %10s %10s\n", "phase", "count", "p50", "p90", "p99", "max");
  print_rows(out, o->rows, o->n_rows, PH_REQUEST);
  if (o->n_fanout) {
    ob_printf(out, "\nFan-out (server spans that call others), microseconds\n");
    print_rows(out, o->fanout, o->n_fanout, PH_TOTAL);
  }
  print_errors(out, o->rows, o->n_rows);
  report_degraded_print(o->degraded, out);
  report_groups_print_rollups(o->groups, out);
  report_slowest_print(o->slowest, out);
  cp_agg_print(o->cpagg, out);
  print_hosts(o);
  report_capture_print(o->captures, out, st, src, o->info != NULL ? o->info->captures : NULL);
  ob_printf(out, "\nCompleteness\n");
  ob_printf(out, "  traces: %" PRIu64 " complete, %" PRIu64 " incomplete\n",
          st->traces - st->incomplete_traces, st->incomplete_traces);
  ob_printf(out, "  spans whose parent never arrived: %" PRIu64 "\n", st->orphan_spans);
  ob_printf(out, "  spans never started or finished:  %" PRIu64 "\n", st->unfinished_spans);
  ob_printf(out, "  client spans with no server span: %" PRIu64 "\n", o->unmatched_client_spans);
  ob_printf(out, "  of which never reached a server:  %" PRIu64 " (refused before sending, or the"
                 " send failed: no server span owed)\n", o->unsent_client_spans);
  ob_printf(out, "  of which a host never recorded:   %" PRIu64 " (answered; see Per host)\n",
            st->missing_spans);
  ob_printf(out, "  events discarded by LTTng:        %" PRIu64 " (%" PRIu64
          " packets lost), traces affected: %" PRIu64 "\n",
          src->discarded_events, src->discarded_packets, st->lossy_traces);
  ob_printf(out, "  malformed hoptrace events:        %" PRIu64 " (dropped), of known traces: %" PRIu64
                 ", traces affected: %" PRIu64 " (incomplete)\n",
            src->malformed_events, st->malformed_events, st->malformed_traces);
  ob_printf(out, "  span sides unnamed (no table):    %" PRIu64 "\n", src->unresolved_names);
  if (ht_drops.names > 0)
    ob_printf(out, "  name table entries not kept:      %" PRIu64 " (--max-names)\n",
              ht_drops.names);
  if (ht_drops.strings > 0)
    ob_printf(out, "  strings cut (--max-string):       %" PRIu64 "\n", ht_drops.strings);
  if (ht_drops.early_traces > 0)
    ob_printf(out, "  traces written before their grace: %" PRIu64 " (--max-open-traces)\n",
              ht_drops.early_traces);
  if (ht_drops.trace_spans > 0)
    ob_printf(out, "  span events past a trace's limit: %" PRIu64 " (--max-trace-spans)\n",
              ht_drops.trace_spans);
  if (src->foreign_names > 0)
    ob_printf(out, "  name events for another process:  %" PRIu64 " (ignored)\n",
              src->foreign_names);
  ob_printf(out, "  spans sharing an id in a trace:   %" PRIu64 " (kept apart, flagged "
                 SPAN_ID_DUPLICATE_KEY ")\n", st->duplicate_id_spans);
  ob_printf(out, "  spans ending before they start:   %" PRIu64 " (flagged " END_BEFORE_START_KEY
                 ")\n", st->backwards_spans);
  if (o->unrecorded_samples)
    ob_printf(out, "  latency samples not counted (out of memory): %" PRIu64 "\n",
            o->unrecorded_samples);
  int rc = obuf_error(out) ? -1 : 0;
  free_rows(o->rows, o->n_rows);
  free_rows(o->fanout, o->n_fanout);
  for (size_t i = 0; i < o->n_pairs; i++) {
    free(o->pairs[i].client_host);
    free(o->pairs[i].server_host);
  }
  free(o->pairs);
  report_groups_free(o->groups);
  report_degraded_free(o->degraded);
  report_capture_free(o->captures);
  report_slowest_free(o->slowest);
  cp_agg_free(o->cpagg);
  free(o);
  return rc;
}

const output_format output_report = {"report", report_open, report_trace, report_close};
