/* `hoptrace report`: what it is built from, per-hop and per-phase latency
 * blocks and errors and timeouts of the hops that had any
 * (report_hops.h), degraded writes
 * per primary (report_degraded.h), per-operation and per-server roll-ups
 * (report_groups.h), the slowest traces with their critical path
 * and their largest network/queue gaps (report_slowest.h), the aggregate
 * critical path (report_cpagg.h), and what was lost. Keeps bounded
 * tallies, not the traces nor the samples: memory does not grow with the
 * input. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/align.h"
#include "assemble/host_health.h"
#include "output/output.h"
#include "output/report_capture.h"
#include "output/report_cpagg.h"
#include "output/report_slowest.h"
#include "output/report_degraded.h"
#include "output/report_groups.h"
#include "output/report_hops.h"
#include "output/utf8.h"
#include "read/limits.h"

/* RPCs between two hosts and the phases their clocks made negative. */
typedef struct host_pair {
  char *client_host, *server_host;
  uint64_t rpcs, negative_request, negative_reply;
} host_pair;

struct output {
  obuf *out;
  report_hops *hops;
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
                    (o->hops = report_hops_new()) == NULL ||
                    (o->slowest = report_slowest_new()) == NULL)) {
    cp_agg_free(o->cpagg);
    report_hops_free(o->hops);
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

static void report_trace(output *o, const trace *t) {
  double w = trace_weight(t);
  report_hops_add(o->hops, t);
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    if (s->kind == HOP_KIND_SERVER && s->parent && s->parent->kind == HOP_KIND_CLIENT) {
      const span *c = s->parent;
      count_cross_host(o, c, s, ns_diff(report_mark(s, "sr", 0), report_mark(c, "cs", 0)),
                       ns_diff(report_mark(c, "cr", 1), report_mark(s, "ss", 1)));
    }
    if (s->kind == HOP_KIND_CLIENT) {
      int matched = 0;
      for (size_t c = 0; c < s->n_children; c++)
        matched |= s->children[c]->kind == HOP_KIND_SERVER;
      o->unmatched_client_spans += !matched;
      o->unsent_client_spans += !matched && !span_reached_server(s);
    }
  }
  if (report_slowest_add(o->slowest, t) != 0)
    o->unrecorded_samples++;
  report_capture_add(o->captures, t);
  if (report_groups_add(o->groups, t) != 0 || report_degraded_add(o->degraded, t, w) != 0)
    o->unrecorded_samples++;
  cp_agg_add(o->cpagg, t); /* what it could not keep, it says itself */
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
  report_hops_print(o->hops, out);
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
  if (src->redefined_names > 0)
    ob_printf(out, "  name entries written again:       %" PRIu64 " (other text, same id and"
                   " vpid: a reused pid, or a process naming another's)\n",
              src->redefined_names);
  if (src->foreign_names > 0)
    ob_printf(out, "  name events for another process:  %" PRIu64 " (ignored)\n",
              src->foreign_names);
  ob_printf(out, "  spans sharing an id in a trace:   %" PRIu64 " (kept apart, flagged "
                 SPAN_ID_DUPLICATE_KEY ")\n", st->duplicate_id_spans);
  ob_printf(out, "  spans ending before they start:   %" PRIu64 " (flagged " END_BEFORE_START_KEY
                 ")\n", st->backwards_spans);
  uint64_t unrecorded = o->unrecorded_samples + report_hops_dropped(o->hops);
  if (unrecorded)
    ob_printf(out, "  latency samples not counted (out of memory, or past %d hops): %" PRIu64
                   "\n", HOPS_ROWS, unrecorded);
  int rc = obuf_error(out) ? -1 : 0;
  report_hops_free(o->hops);
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
