/* OTLP/JSON ExportTraceServiceRequest: spans grouped by resource
 * (service, process, host) per trace. Ids hex, times as nanosecond
 * strings, kind as the OTLP enum. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "output.h"

struct output {
  FILE *out;
  int first;
};

static output *otlp_open(FILE *out) {
  output *o = calloc(1, sizeof(*o));
  if (o == NULL)
    return NULL;
  o->out = out;
  o->first = 1;
  fputs("{\"resourceSpans\":[", out);
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

static void attr_str(FILE *out, int *first, const char *key, const char *value) {
  fputs(*first ? "{\"key\":" : ",{\"key\":", out);
  *first = 0;
  json_string(out, key);
  fputs(",\"value\":{\"stringValue\":", out);
  json_string(out, value);
  fputs("}}", out);
}

static void attr_int(FILE *out, int *first, const char *key, int64_t value) {
  fputs(*first ? "{\"key\":" : ",{\"key\":", out);
  *first = 0;
  json_string(out, key);
  fputs(",\"value\":{\"intValue\":\"", out);
  json_i64(out, value);
  fputs("\"}}", out);
}

static int same_resource(const span *a, const span *b) {
  return a->vpid == b->vpid &&
         strcmp(a->service ? a->service : "", b->service ? b->service : "") == 0 &&
         strcmp(a->hostname ? a->hostname : "", b->hostname ? b->hostname : "") == 0;
}

static void otlp_span(FILE *out, const trace *t, const span *s, int first) {
  char why[160];
  fputs(first ? "{\"traceId\":" : ",{\"traceId\":", out);
  json_trace_id(out, t->trace_hi, t->trace_lo, 0);
  fputs(",\"spanId\":", out);
  json_hex64(out, s->id);
  if (s->parent_id) {
    fputs(",\"parentSpanId\":", out);
    json_hex64(out, s->parent_id);
  }
  fputs(",\"name\":", out);
  json_string(out, s->name ? s->name : "unknown");
  int64_t start = s->started ? s->start_ns : (s->n_annotations ? s->annotations[0].ts_ns : s->end_ns);
  int64_t end = s->ended ? s->end_ns : start;
  fputs(",\"kind\":", out);
  json_i64(out, otlp_kind(s->kind));
  fputs(",\"startTimeUnixNano\":\"", out);
  json_i64(out, start);
  fputs("\",\"endTimeUnixNano\":\"", out);
  json_i64(out, end);
  fputc('"', out);
  fputs(",\"attributes\":[", out);
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
  if (t->incomplete)
    attr_str(out, &a, "hoptrace.incomplete", trace_incomplete_reason(t, why, sizeof(why)));
  fputs("],\"events\":[", out);
  for (size_t i = 0; i < s->n_annotations; i++) {
    fputs(i ? ",{\"timeUnixNano\":\"" : "{\"timeUnixNano\":\"", out);
    json_i64(out, s->annotations[i].ts_ns);
    fputs("\",\"name\":", out);
    json_string(out, s->annotations[i].value);
    fputc('}', out);
  }
  fputs("],\"status\":{", out);
  if (s->status != 0) {
    fputs("\"code\":2,\"message\":", out);
    char num[32];
    snprintf(num, sizeof(num), "status %d", s->status);
    json_string(out, s->status_message ? s->status_message : num);
  } else if (s->ended) {
    fputs("\"code\":1", out);
  }
  fputs("}}", out);
}

static void resource(FILE *out, const span *s) {
  fputs("{\"resource\":{\"attributes\":[", out);
  int first = 1;
  attr_str(out, &first, "service.name", s->service ? s->service : "unknown");
  if (s->vpid >= 0)
    attr_int(out, &first, "process.pid", s->vpid);
  if (s->procname)
    attr_str(out, &first, "process.executable.name", s->procname);
  if (s->hostname)
    attr_str(out, &first, "host.name", s->hostname);
  fputs("]},\"scopeSpans\":[{\"scope\":{\"name\":\"hoptrace\"},\"spans\":[", out);
}

static void otlp_trace(output *o, const trace *t) {
  /* group spans by resource; traces are small, so quadratic is fine */
  char *done = calloc(t->n_spans ? t->n_spans : 1, 1);
  if (done == NULL)
    return;
  for (size_t i = 0; i < t->n_spans; i++) {
    if (done[i])
      continue;
    fputs(o->first ? "\n" : ",\n", o->out);
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
    fputs("]}]}", o->out);
  }
  free(done);
}

static int otlp_close(output *o, const bt_source_stats *src, const assembler_stats *st) {
  (void)src;
  (void)st;
  fputs("\n]}\n", o->out);
  int rc = ferror(o->out) ? -1 : 0;
  free(o);
  return rc;
}

const output_format output_otlp = {"otlp", otlp_open, otlp_trace, otlp_close};
