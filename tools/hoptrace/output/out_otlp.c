/* OTLP/JSON ExportTraceServiceRequest: spans grouped by resource
 * (service, process, host) per trace. Ids hex, times as nanosecond
 * strings, kind as the OTLP enum. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/json.h"
#include "output/output.h"

struct output {
  obuf *out;
  int first;
};

static output *otlp_open(obuf *out, const output_info *info) {
  (void)info;
  output *o = calloc(1, sizeof(*o));
  if (o == NULL)
    return NULL;
  o->out = out;
  o->first = 1;
  ob_puts(out, "{\"resourceSpans\":[");
  return o;
}

static int otlp_kind(int kind) {
  switch (kind) {
  case HOP_KIND_SERVER: return 2;
  case HOP_KIND_CLIENT: return 3;
  case HOP_KIND_PRODUCER: return 4;
  case HOP_KIND_CONSUMER: return 5;
  default: return 1; /* SPAN_KIND_INTERNAL */
  }
}

static void attr_str(obuf *out, int *first, const char *key, const char *value) {
  ob_puts(out, *first ? "{\"key\":" : ",{\"key\":");
  *first = 0;
  json_string(out, key);
  ob_puts(out, ",\"value\":{\"stringValue\":");
  json_string(out, value);
  ob_puts(out, "}}");
}

static void attr_int(obuf *out, int *first, const char *key, int64_t value) {
  ob_puts(out, *first ? "{\"key\":" : ",{\"key\":");
  *first = 0;
  json_string(out, key);
  ob_puts(out, ",\"value\":{\"intValue\":\"");
  json_i64(out, value);
  ob_puts(out, "\"}}");
}

static int same_resource(const span *a, const span *b) {
  return a->vpid == b->vpid &&
         strcmp(a->service ? a->service : "", b->service ? b->service : "") == 0 &&
         strcmp(a->hostname ? a->hostname : "", b->hostname ? b->hostname : "") == 0;
}

static void otlp_span(obuf *out, const trace *t, const span *s, int first) {
  char why[160];
  ob_puts(out, first ? "{\"traceId\":" : ",{\"traceId\":");
  json_trace_id(out, t->trace_hi, t->trace_lo, 0);
  ob_puts(out, ",\"spanId\":");
  json_hex64(out, s->id);
  if (s->parent_id) {
    ob_puts(out, ",\"parentSpanId\":");
    json_hex64(out, s->parent_id);
  }
  ob_puts(out, ",\"name\":");
  json_string(out, s->name ? s->name : "unknown");
  int64_t start = s->started ? s->start_ns : (s->n_annotations ? s->annotations[0].ts_ns : s->end_ns);
  int64_t end = s->ended ? s->end_ns : start;
  ob_puts(out, ",\"kind\":");
  json_i64(out, otlp_kind(s->kind));
  ob_puts(out, ",\"startTimeUnixNano\":\"");
  json_i64(out, start);
  ob_puts(out, "\",\"endTimeUnixNano\":\"");
  json_i64(out, end);
  ob_putc(out, '"');
  ob_puts(out, ",\"attributes\":[");
  int a = 1;
  for (size_t i = 0; i < s->n_tags; i++) {
    if (s->tags[i].is_int)
      attr_int(out, &a, s->tags[i].key, s->tags[i].int_value);
    else
      attr_str(out, &a, s->tags[i].key, s->tags[i].str_value);
  }
  if (s->endpoint)
    attr_str(out, &a, "hoptrace.endpoint", s->endpoint);
  if (s->peer)
    attr_str(out, &a, "net.peer.name", s->peer);
  if (s->clock_bound_ns >= 0) {
    attr_int(out, &a, "hoptrace.clock.shift_ns", s->clock_shift_ns);
    attr_int(out, &a, "hoptrace.clock.bound_ns", s->clock_bound_ns);
  }
  if (t->incomplete)
    attr_str(out, &a, "hoptrace.incomplete", trace_incomplete_reason(t, why, sizeof(why)));
  ob_puts(out, "],\"events\":[");
  for (size_t i = 0; i < s->n_annotations; i++) {
    ob_puts(out, i ? ",{\"timeUnixNano\":\"" : "{\"timeUnixNano\":\"");
    json_i64(out, s->annotations[i].ts_ns);
    ob_puts(out, "\",\"name\":");
    json_string(out, s->annotations[i].value);
    ob_putc(out, '}');
  }
  ob_puts(out, "],\"status\":{");
  if (s->status != 0) {
    ob_puts(out, "\"code\":2,\"message\":");
    char num[32];
    snprintf(num, sizeof(num), "status %d", s->status);
    json_string(out, s->status_message ? s->status_message : num);
  } else if (s->ended) {
    ob_puts(out, "\"code\":1");
  }
  ob_puts(out, "}}");
}

static void resource(obuf *out, const span *s) {
  ob_puts(out, "{\"resource\":{\"attributes\":[");
  int first = 1;
  attr_str(out, &first, "service.name", s->service ? s->service : "unknown");
  if (s->vpid >= 0)
    attr_int(out, &first, "process.pid", s->vpid);
  if (s->procname)
    attr_str(out, &first, "process.executable.name", s->procname);
  if (s->hostname)
    attr_str(out, &first, "host.name", s->hostname);
  ob_puts(out, "]},\"scopeSpans\":[{\"scope\":{\"name\":\"hoptrace\"},\"spans\":[");
}

static void otlp_trace(output *o, const trace *t) {
  /* group spans by resource; traces are small, so quadratic is fine */
  char *done = calloc(t->n_spans ? t->n_spans : 1, 1);
  if (done == NULL)
    return;
  for (size_t i = 0; i < t->n_spans; i++) {
    if (done[i])
      continue;
    ob_puts(o->out, o->first ? "\n" : ",\n");
    o->first = 0;
    resource(o->out, t->spans[i]);
    int first = 1;
    for (size_t j = i; j < t->n_spans; j++) {
      if (!done[j] && same_resource(t->spans[i], t->spans[j])) {
        done[j] = 1;
        otlp_span(o->out, t, t->spans[j], first);
        first = 0;
      }
    }
    ob_puts(o->out, "]}]}");
  }
  free(done);
}

static int otlp_close(output *o, const bt_source_stats *src, const assembler_stats *st) {
  (void)src;
  (void)st;
  ob_puts(o->out, "\n]}\n");
  int rc = obuf_error(o->out) ? -1 : 0;
  free(o);
  return rc;
}

const output_format output_otlp = {"otlp", otlp_open, otlp_trace, otlp_close};
