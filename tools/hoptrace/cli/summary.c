/* The run's summary on stderr: what was read and assembled, what was
 * lost or flagged and why, each host's health, the clocks' alignment. */
#include "cli/summary.h"

#include <inttypes.h>
#include <stdio.h>

#include "assemble/model.h"
#include "output/output.h"
#include "output/utf8.h"
#include "read/limits.h"

static void capture_summary(const run_summary *r, const assembler_stats *st) {
  uint64_t triggers = 0;
  for (int i = 0; i < HOP_CAPTURE_WHY_MAX; i++)
    triggers += st->triggers[i];
  if (r->flight || st->captured_traces > 0)
    fprintf(stderr,
            "hoptrace: %" PRIu64 " captured traces (%" PRIu64 " complete, %" PRIu64
            " partial), %" PRIu64 " triggers, %" PRIu64 " capture notices answered\n",
            st->captured_traces, st->captured_complete, st->captured_partial,
            triggers, st->notices);
  if (r->not_captured > 0)
    fprintf(stderr,
            "hoptrace: %" PRIu64 " traces of the snapshots not captured: not written"
            " (--all writes them)%s\n",
            r->not_captured,
            r->follow ? "; one the follower dropped and read again counted again" : "");
  if (r->not_kept > 0)
    fprintf(stderr,
            "hoptrace: %" PRIu64 " traces recorded, not kept (a flight-mode process recorded"
            " them, its sampler did not keep them): not written (--all writes them)\n",
            r->not_kept);
}

static void counts(const bt_source_stats *src, const assembler_stats *st,
                   unsigned long long replaced) {
  fprintf(stderr,
          "hoptrace: %" PRIu64 " events, %" PRIu64 " traces (%" PRIu64 " incomplete: %" PRIu64
          " spans without parent, %" PRIu64 " unfinished, %" PRIu64 " touched by loss), %" PRIu64
          " events discarded by LTTng, %" PRIu64 " packets lost, %" PRIu64 " malformed\n",
          src->hop_events, st->traces, st->incomplete_traces, st->orphan_spans,
          st->unfinished_spans, st->lossy_traces, src->discarded_events,
          src->discarded_packets, src->malformed_events);
  if (src->flight)
    fprintf(stderr,
            "hoptrace: flight-recorder snapshots: %" PRIu64 " copies of events that more than"
            " one overlapping snapshot held skipped (each event read once)\n",
            src->duplicate_events);
  if (src->unresolved_names > 0)
    fprintf(stderr,
            "hoptrace: %" PRIu64 " span sides unnamed: their process's name tables "
            "(desc/peer events) are not in this trace\n",
            src->unresolved_names);
  if (src->redefined_names > 0)
    fprintf(stderr,
            "hoptrace: %" PRIu64 " name table entries (process/desc/peer) written again with"
            " other text under the same id and vpid (a reused pid, or a process naming"
            " another's): each span keeps the names of its time\n",
            src->redefined_names);
  if (src->foreign_names > 0)
    fprintf(stderr,
            "hoptrace: %" PRIu64 " name events (process/desc/peer) naming another process than"
            " the one that wrote them (their vpid context): ignored\n",
            src->foreign_names);
  if (st->invalid_prob_traces > 0)
    fprintf(stderr,
            "hoptrace: %" PRIu64 " traces whose root recorded an impossible sampling probability"
            " (outside (0, 1]): flagged " SAMPLING_PROBABILITY_INVALID_KEY ", taken as unknown\n",
            st->invalid_prob_traces);
  if (st->duplicate_id_spans > 0)
    fprintf(stderr,
            "hoptrace: %" PRIu64 " spans share their span id with another span of their trace:"
            " kept apart, flagged " SPAN_ID_DUPLICATE_KEY "%s\n",
            st->duplicate_id_spans,
            src->flight ? "" : " (overlapping flight-recorder snapshots under other names?"
                               " --snapshots reads each of their events once)");
  if (st->malformed_traces > 0)
    fprintf(stderr,
            "hoptrace: %" PRIu64 " traces lost %" PRIu64 " events dropped as malformed:"
            " marked incomplete\n",
            st->malformed_traces, st->malformed_events);
  if (st->backwards_spans > 0)
    fprintf(stderr,
            "hoptrace: %" PRIu64 " spans end before they start (a clock set back, or a corrupt"
            " trace): flagged " END_BEFORE_START_KEY "\n",
            st->backwards_spans);
  if (replaced > 0)
    fprintf(stderr,
            "hoptrace: %llu invalid UTF-8 sequences in the trace's strings written as U+FFFD\n",
            replaced);
}

static void print_health(const void *s, FILE *f) {
  const run_summary *x = s;
  host_health_print(x->hosts, x->stall_ns, f);
}
static void print_clock(const void *al, FILE *f) { clock_sync_print(align_clock(al), f); }

/* The host tables name the trace's hosts: a peer's bytes, escaped
 * (utf8.h) before they reach a terminal. */
static void to_stderr(void (*print)(const void *, FILE *), const void *what) {
  obuf *b = obuf_new(stderr);
  if (b == NULL)
    return;
  text_printed(b, print, what);
  obuf_flush(b);
  obuf_free(b);
}

static void align_summary(const align_state *al, int hosts) {
  fprintf(stderr, "hoptrace: clocks of %d hosts aligned from %" PRIu64 " cross-host RPCs:\n",
          hosts, align_rpcs(al));
  to_stderr(print_clock, al);
}

void summary_print(const run_summary *s) {
  counts(s->src, s->st, s->replaced);
  limits_print_drops(stderr);
  capture_summary(s, s->st);
  if (s->followed != NULL)
    follow_print(s->followed, stderr);
  if (host_health_count(s->hosts) > 1)
    to_stderr(print_health, s);
  if (s->align != NULL)
    align_summary(s->align, s->n_hosts);
}
