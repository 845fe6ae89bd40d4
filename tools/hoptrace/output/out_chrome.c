/* Chrome trace-event JSON (opens in Perfetto's UI and chrome://tracing):
 * one track per process and thread, spans as complete events, Dapper
 * annotations as instant events, client->server hops as flow arrows. */
#include <inttypes.h>
#include <stdlib.h>

#include "assemble/idmap.h"
#include "output/json.h"
#include "output/output.h"

struct output {
  obuf *out;
  int first;
  idmap named; /* (pid, tid) already given a name; tid 0 for the process */
  uint64_t next_flow;
};

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

static void name_tracks(output *o, const span *s) {
  int64_t pid = pid_of(s), tid = tid_of(s);
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
            ",\"tid\":%" PRId64 ",\"args\":{\"name\":\"tid %" PRId64 "\"}}", pid, tid, tid);
  }
}

static void span_event(output *o, const trace *t, const span *s) {
  char why[160];
  int64_t start = s->started ? s->start_ns : (s->n_annotations ? s->annotations[0].ts_ns : s->end_ns);
  int64_t dur = span_duration_ns(s);
  sep(o);
  ob_puts(o->out, "{\"ph\":\"X\",\"cat\":\"hoptrace\",\"name\":");
  json_string(o->out, s->name ? s->name : "unknown");
  ob_printf(o->out, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"trace_id\":",
          pid_of(s), tid_of(s), (double)start / 1000.0, (double)dur / 1000.0);
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
  ob_puts(o->out, "}}");
  for (size_t i = 0; i < s->n_annotations; i++) {
    sep(o);
    ob_puts(o->out, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"hoptrace\",\"name\":");
    json_string(o->out, s->annotations[i].value);
    ob_printf(o->out, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":%.3f}", pid_of(s),
            tid_of(s), (double)s->annotations[i].ts_ns / 1000.0);
  }
}

/* An arrow from a parent to a child that runs in another thread. */
static void flow(output *o, const span *parent, const span *child) {
  if (!child->started || (pid_of(parent) == pid_of(child) && tid_of(parent) == tid_of(child)))
    return;
  uint64_t id = ++o->next_flow;
  int64_t at = child->start_ns;
  int64_t from = parent->started && parent->start_ns <= at ? at : parent->start_ns;
  sep(o);
  ob_printf(o->out, "{\"ph\":\"s\",\"cat\":\"hop\",\"name\":\"hop\",\"id\":%" PRIu64
          ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":%.3f}", id, pid_of(parent),
          tid_of(parent), (double)from / 1000.0);
  sep(o);
  ob_printf(o->out, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"hop\",\"name\":\"hop\",\"id\":%" PRIu64
          ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":%.3f}", id, pid_of(child),
          tid_of(child), (double)at / 1000.0);
}

static void chrome_trace(output *o, const trace *t) {
  for (size_t i = 0; i < t->n_spans; i++) {
    name_tracks(o, t->spans[i]);
    span_event(o, t, t->spans[i]);
    if (t->spans[i]->parent)
      flow(o, t->spans[i]->parent, t->spans[i]);
  }
}

static int chrome_close(output *o, const bt_source_stats *src, const assembler_stats *st) {
  ob_printf(o->out, "\n],\"otherData\":{\"traces\":%" PRIu64 ",\"incomplete_traces\":%" PRIu64
          ",\"discarded_events\":%" PRIu64 "}}\n", st->traces, st->incomplete_traces,
          src->discarded_events);
  int rc = obuf_error(o->out) ? -1 : 0;
  idmap_free(&o->named);
  free(o);
  return rc;
}

const output_format output_chrome = {"chrome", chrome_open, chrome_trace, chrome_close};
