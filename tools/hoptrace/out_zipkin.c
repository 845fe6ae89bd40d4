/* Zipkin v2 JSON: a flat list of spans (what POST /api/v2/spans and the
 * UI's JSON upload take). Times in microseconds; ids lower hex. */
#include <inttypes.h>
#include <stdlib.h>

#include "json.h"
#include "output.h"

struct output {
  FILE *out;
  int first;
};

static output *zipkin_open(FILE *out) {
  output *o = calloc(1, sizeof(*o));
  if (o == NULL)
    return NULL;
  o->out = out;
  o->first = 1;
  fputs("[", out);
  return o;
}

static const char *zipkin_kind(int kind) {
  switch (kind) {
  case HOP_KIND_CLIENT: return "CLIENT";
  case HOP_KIND_SERVER: return "SERVER";
  case HOP_KIND_PRODUCER: return "PRODUCER";
  case HOP_KIND_CONSUMER: return "CONSUMER";
  default: return NULL; /* internal: Zipkin leaves kind out */
  }
}

static void endpoint(FILE *out, const char *field, const char *service, const char *addr) {
  endpoint_parts parts;
  endpoint_parse(addr, &parts);
  fputs(",\"", out);
  fputs(field, out);
  fputs("\":{", out);
  int comma = 0;
  if (service != NULL) {
    fputs("\"serviceName\":", out);
    json_string(out, service);
    comma = 1;
  }
  if (parts.ipv4[0])
    fprintf(out, "%s\"ipv4\":\"%s\"", comma++ ? "," : "", parts.ipv4);
  if (parts.ipv6[0])
    fprintf(out, "%s\"ipv6\":\"%s\"", comma++ ? "," : "", parts.ipv6);
  if (parts.port > 0) {
    fputs(comma++ ? ",\"port\":" : "\"port\":", out);
    json_i64(out, parts.port);
  }
  fputc('}', out);
}

static void tag_str(FILE *out, int *first, const char *key, const char *value) {
  fputs(*first ? "" : ",", out);
  *first = 0;
  json_string(out, key);
  fputc(':', out);
  json_string(out, value);
}

static void tags(FILE *out, const trace *t, const span *s) {
  fputs(",\"tags\":{", out);
  int first = 1;
  char num[32], why[160];
  for (size_t i = 0; i < s->n_tags; i++) {
    if (s->tags[i].is_int) {
      snprintf(num, sizeof(num), "%" PRId64, s->tags[i].int_value);
      tag_str(out, &first, s->tags[i].key, num);
    } else {
      tag_str(out, &first, s->tags[i].key, s->tags[i].str_value);
    }
  }
  if (s->status != 0) {
    snprintf(num, sizeof(num), "%d", s->status);
    tag_str(out, &first, "error", s->status_message ? s->status_message : num);
    tag_str(out, &first, "hoptrace.status", num);
  }
  if (s->endpoint)
    tag_str(out, &first, "hoptrace.endpoint", s->endpoint);
  if (s->vpid >= 0) {
    snprintf(num, sizeof(num), "%" PRId64, s->vpid);
    tag_str(out, &first, "hoptrace.pid", num);
  }
  if (s->hostname)
    tag_str(out, &first, "hoptrace.host", s->hostname);
  if (t->incomplete)
    tag_str(out, &first, "hoptrace.incomplete", trace_incomplete_reason(t, why, sizeof(why)));
  fputc('}', out);
}

static int64_t span_start_ns(const span *s) {
  if (s->started)
    return s->start_ns;
  if (s->n_annotations)
    return s->annotations[0].ts_ns;
  return s->end_ns;
}

static void zipkin_span(output *o, const trace *t, const span *s) {
  FILE *out = o->out;
  fputs(o->first ? "\n" : ",\n", out);
  o->first = 0;
  fputs("{\"traceId\":", out);
  json_trace_id(out, t->trace_hi, t->trace_lo, 1);
  fputs(",\"id\":", out);
  json_hex64(out, s->id);
  if (s->parent_id) {
    fputs(",\"parentId\":", out);
    json_hex64(out, s->parent_id);
  }
  fputs(",\"name\":", out);
  json_string(out, s->name ? s->name : "unknown");
  const char *kind = zipkin_kind(s->kind);
  if (kind) {
    fputs(",\"kind\":\"", out);
    fputs(kind, out);
    fputc('"', out);
  }
  fputs(",\"timestamp\":", out);
  json_i64(out, span_start_ns(s) / 1000);
  int64_t dur = span_duration_ns(s);
  if (s->started && s->ended) {
    fputs(",\"duration\":", out);
    json_i64(out, dur / 1000 > 0 ? dur / 1000 : 1);
  }
  if (s->flags & 2u)
    fputs(",\"debug\":true", out);
  endpoint(out, "localEndpoint", s->service ? s->service : "unknown", s->endpoint);
  if (s->peer)
    endpoint(out, "remoteEndpoint", NULL, s->peer);
  fputs(",\"annotations\":[", out);
  for (size_t i = 0; i < s->n_annotations; i++) {
    fputs(i ? ",{\"timestamp\":" : "{\"timestamp\":", out);
    json_i64(out, s->annotations[i].ts_ns / 1000);
    fputs(",\"value\":", out);
    json_string(out, s->annotations[i].value);
    fputc('}', out);
  }
  fputc(']', out);
  tags(out, t, s);
  fputc('}', out);
}

static void zipkin_trace(output *o, const trace *t) {
  for (size_t i = 0; i < t->n_spans; i++)
    zipkin_span(o, t, t->spans[i]);
}

static int zipkin_close(output *o, const bt_source_stats *src, const assembler_stats *st) {
  (void)src;
  (void)st;
  fputs(o->first ? "]\n" : "\n]\n", o->out);
  int rc = ferror(o->out) ? -1 : 0;
  free(o);
  return rc;
}

const output_format output_zipkin = {"zipkin", zipkin_open, zipkin_trace, zipkin_close};
