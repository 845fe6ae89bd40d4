/* Chrome trace-event JSON (opens in Perfetto's UI and chrome://tracing):
 * one track per process and thread, spans as complete events, Dapper
 * annotations as instant events, client->server hops as flow arrows.
 * Times are exact (integer ns written as us with three decimals) and
 * relative to an origin written in otherData: a reader holds them as
 * doubles, exact to the ns near zero but only to 256 ns at epoch
 * microseconds. Spans of a thread that partly overlap or are unrelated
 * go to extra tracks (chrome_lanes.h). */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

#include "assemble/idmap.h"
#include "output/chrome_lanes.h"
#include "output/json.h"
#include "output/output.h"

struct output {
  obuf *out;
  int first;
  idmap named; /* (pid, tid) already given a name; tid 0 for the process */
  uint64_t next_flow;
  chrome_lanes lanes;
  /* Unix ns every ts is relative to: the first trace written's start,
   * down to a whole second (streamed, so the recording's true start is
   * not known yet; an earlier trace written later has negative times) */
  int64_t origin;
  int have_origin;
  int failed; /* out of memory: the document is incomplete */
};

/* A span and its track, placed in start order. */
typedef struct placed {
  const span *s;
  size_t index;
  int64_t start, end, tid;
  int lane;
} placed;

static output *chrome_open(obuf *out, const output_info *info) {
  (void)info;
  output *o = calloc(1, sizeof(*o));
  if (o == NULL)
    return NULL;
  o->out = out;
  o->first = 1;
  ob_puts(out, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
  return o;
}

static void sep(output *o) {
  ob_puts(o->out, o->first ? "\n" : ",\n");
  o->first = 0;
}

/* Spans without a recorded pid are grouped by service. */
static int64_t pid_of(const span *s) {
  if (s->vpid >= 0)
    return s->vpid;
  uint64_t h = 1469598103934665603ull;
  for (const char *p = s->service ? s->service : ""; *p; p++)
    h = (h ^ (unsigned char)*p) * 1099511628211ull;
  return (int64_t)(h % 1000000) + 1000000;
}

static int64_t tid_of(const span *s) { return s->vtid >= 0 ? s->vtid : pid_of(s); }

#define NS_PER_S INT64_C(1000000000)

static void set_origin(output *o, int64_t start) {
  if (o->have_origin)
    return;
  int64_t r = start % NS_PER_S;
  /* Whole seconds below the first start; a start within a second of
   * INT64_MIN (a hostile trace) has no whole second below it: itself. */
  if (__builtin_sub_overflow(start, r < 0 ? r + NS_PER_S : r, &o->origin))
    o->origin = start;
  o->have_origin = 1;
}

/* A time as us since the origin; saturated (a span never ended ends at
 * INT64_MAX). */
static void ts_rel(output *o, int64_t ns) {
  int64_t d;
  if (__builtin_sub_overflow(ns, o->origin, &d))
    d = ns < 0 ? INT64_MIN : INT64_MAX;
  json_ns_as_us(o->out, d);
}

static void name_tracks(output *o, const span *s, int64_t tid, int lane) {
  int64_t pid = pid_of(s);
  static int marker;
  if (idmap_get(&o->named, (uint64_t)pid, 0) == NULL &&
      idmap_put(&o->named, (uint64_t)pid, 0, &marker) == 0) {
    sep(o);
    ob_printf(o->out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRId64
            ",\"tid\":%" PRId64 ",\"args\":{\"name\":", pid, tid);
    char label[256];
    snprintf(label, sizeof(label), "%s (%s pid %" PRId64 ")", s->service ? s->service : "?",
             s->procname ? s->procname : "?", pid);
    json_string(o->out, label);
    ob_puts(o->out, "}}");
  }
  if (idmap_get(&o->named, (uint64_t)pid, (uint64_t)tid + 1) == NULL &&
      idmap_put(&o->named, (uint64_t)pid, (uint64_t)tid + 1, &marker) == 0) {
    sep(o);
    ob_printf(o->out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRId64
            ",\"tid\":%" PRId64 ",\"args\":{\"name\":\"tid %" PRId64, pid, tid, tid_of(s));
    if (lane > 0) /* spans of that thread overlapping others of lane 0 */
      ob_printf(o->out, " (overlap %d)", lane);
    ob_puts(o->out, "\"}}");
  }
}

static void span_event(output *o, const trace *t, const placed *p) {
  const span *s = p->s;
  char why[INCOMPLETE_REASON_MAX];
  sep(o);
  ob_puts(o->out, "{\"ph\":\"X\",\"cat\":\"hoptrace\",\"name\":");
  json_string(o->out, s->name ? s->name : "unknown");
  ob_printf(o->out, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", pid_of(s), p->tid);
  ts_rel(o, p->start);
  ob_puts(o->out, ",\"dur\":");
  json_ns_as_us(o->out, ns_diff(p->end, p->start));
  ob_puts(o->out, ",\"args\":{\"trace_id\":");
  json_trace_id(o->out, t->trace_hi, t->trace_lo, 0);
  ob_puts(o->out, ",\"span_id\":");
  json_hex64(o->out, s->id);
  ob_puts(o->out, ",\"parent_span_id\":");
  json_hex64(o->out, s->parent_id);
  ob_printf(o->out, ",\"status\":%d", s->status);
  if (s->clock_bound_ns >= 0)
    ob_printf(o->out, ",\"clock_shift_ns\":%" PRId64 ",\"clock_bound_ns\":%" PRId64,
              s->clock_shift_ns, s->clock_bound_ns);
  for (size_t i = 0; i < s->n_tags; i++) {
    ob_putc(o->out, ',');
    json_string(o->out, s->tags[i].key);
    ob_putc(o->out, ':');
    if (s->tags[i].is_int)
      ob_printf(o->out, "%" PRId64, s->tags[i].int_value);
    else
      json_string(o->out, s->tags[i].str_value);
  }
  if (t->incomplete) {
    ob_puts(o->out, ",\"incomplete\":");
    json_string(o->out, trace_incomplete_reason(t, why, sizeof(why)));
  }
  char unfinished[96];
  if (span_unfinished(s, unfinished, sizeof(unfinished)) != NULL) {
    ob_puts(o->out, ",\"" UNFINISHED_KEY "\":");
    json_string(o->out, unfinished);
  }
  ob_puts(o->out, "}}");
  for (size_t i = 0; i < s->n_annotations; i++) {
    sep(o);
    ob_puts(o->out, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"hoptrace\",\"name\":");
    json_string(o->out, s->annotations[i].value);
    ob_printf(o->out, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", pid_of(s), p->tid);
    ts_rel(o, s->annotations[i].ts_ns);
    ob_puts(o->out, ",\"args\":{\"span_id\":");
    json_hex64(o->out, s->id);
    ob_puts(o->out, "}}");
  }
}

/* An arrow from a parent to a child on another track. */
static void flow(output *o, const placed *parent, const placed *child) {
  if (!child->s->started || (pid_of(parent->s) == pid_of(child->s) && parent->tid == child->tid))
    return;
  uint64_t id = ++o->next_flow;
  int64_t at = child->s->start_ns;
  int64_t from = parent->s->started && parent->s->start_ns <= at ? at : parent->s->start_ns;
  sep(o);
  ob_printf(o->out, "{\"ph\":\"s\",\"cat\":\"hop\",\"name\":\"hop\",\"id\":%" PRIu64
          ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", id, pid_of(parent->s), parent->tid);
  ts_rel(o, from);
  ob_puts(o->out, "}");
  sep(o);
  ob_printf(o->out, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"hop\",\"name\":\"hop\",\"id\":%" PRIu64
          ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", id, pid_of(child->s), child->tid);
  ts_rel(o, at);
  ob_puts(o->out, "}");
}

/* Start order, a longer span first so that what it contains nests. */
static int by_start(const void *a, const void *b) {
  const placed *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  if (x->end != y->end)
    return x->end > y->end ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static int by_span(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const placed *)a)->s, y = (uintptr_t)((const placed *)b)->s;
  return x < y ? -1 : x > y;
}

static void chrome_trace(output *o, const trace *t) {
  if (t->n_spans == 0)
    return;
  placed *p = malloc(t->n_spans * sizeof(*p));
  if (p == NULL) {
    o->failed = 1;
    return;
  }
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    int64_t start = span_shown_start_ns(s);
    int64_t dur = span_duration_ns(s);
    int64_t end = start > 0 && dur > INT64_MAX - start ? INT64_MAX : start + dur;
    p[i] = (placed){s, i, start, end, 0, 0};
  }
  qsort(p, t->n_spans, sizeof(*p), by_start);
  set_origin(o, p[0].start);
  chrome_lanes_next_trace(&o->lanes);
  for (size_t i = 0; i < t->n_spans; i++) {
    int lane = chrome_lane_place(&o->lanes, pid_of(p[i].s), tid_of(p[i].s), p[i].s, p[i].start,
                                 p[i].end);
    if (lane < 0)
      o->failed = 1;
    p[i].lane = lane < 0 ? 0 : lane;
    p[i].tid = chrome_lane_tid(tid_of(p[i].s), p[i].lane);
    name_tracks(o, p[i].s, p[i].tid, p[i].lane);
    span_event(o, t, &p[i]);
  }
  qsort(p, t->n_spans, sizeof(*p), by_span);
  for (size_t i = 0; i < t->n_spans; i++) {
    placed key = {.s = p[i].s->parent};
    const placed *parent = key.s ? bsearch(&key, p, t->n_spans, sizeof(*p), by_span) : NULL;
    if (parent != NULL)
      flow(o, parent, &p[i]);
  }
  free(p);
}

static int chrome_close(output *o, const bt_source_stats *src, const assembler_stats *st) {
  ob_printf(o->out, "\n],\"otherData\":{\"traces\":%" PRIu64 ",\"incomplete_traces\":%" PRIu64
          ",\"discarded_events\":%" PRIu64 ",\"overlapping_spans_forced\":%" PRIu64,
          st->traces, st->incomplete_traces, src->discarded_events, o->lanes.forced);
  /* a string: JSON readers hold numbers as doubles */
  if (o->have_origin)
    ob_printf(o->out, ",\"time_origin_unix_ns\":\"%" PRId64 "\"", o->origin);
  ob_puts(o->out, "}}\n");
  int rc = obuf_error(o->out) || o->failed ? -1 : 0;
  idmap_free(&o->named);
  chrome_lanes_free(&o->lanes);
  free(o);
  return rc;
}

const output_format output_chrome = {"chrome", chrome_open, chrome_trace, chrome_close};
