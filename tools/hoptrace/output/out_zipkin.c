/* Zipkin v2 JSON: a flat list of spans (what POST /api/v2/spans and the
 * UI's JSON upload take). Times in microseconds; ids lower hex. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/json.h"
#include "output/output.h"
#include "output/semconv.h"

struct output {
  obuf *out;
  int first;
  endpoint_cache endpoints;
};

static output *zipkin_open(obuf *out, const output_info *info) {
  (void)info;
  output *o = calloc(1, sizeof(*o));
  if (o == NULL)
    return NULL;
  o->out = out;
  o->first = 1;
  ob_puts(out, "[");
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

static void endpoint(output *o, const char *field, const char *service, const char *addr) {
  obuf *out = o->out;
  endpoint_parts scratch;
  const endpoint_parts *parts = endpoint_parse_cached(&o->endpoints, addr, &scratch);
  ob_puts(out, ",\"");
  ob_puts(out, field);
  ob_puts(out, "\":{");
  int comma = 0;
  if (service != NULL) {
    ob_puts(out, "\"serviceName\":");
    json_string(out, service);
    comma = 1;
  }
  if (parts->ipv4[0]) {
    ob_puts(out, comma++ ? ",\"ipv4\":\"" : "\"ipv4\":\"");
    ob_puts(out, parts->ipv4);
    ob_putc(out, '"');
  }
  if (parts->ipv6[0]) {
    ob_puts(out, comma++ ? ",\"ipv6\":\"" : "\"ipv6\":\"");
    ob_puts(out, parts->ipv6);
    ob_putc(out, '"');
  }
  if (parts->port > 0) {
    ob_puts(out, comma++ ? ",\"port\":" : "\"port\":");
    json_i64(out, parts->port);
  }
  ob_putc(out, '}');
}

static void tag_key(obuf *out, int *first, const char *key) {
  if (!*first)
    ob_putc(out, ',');
  *first = 0;
  json_string(out, key);
  ob_putc(out, ':');
}

static void tag_str(obuf *out, int *first, const char *key, const char *value) {
  tag_key(out, first, key);
  json_string(out, value);
}

/* Zipkin tags are strings: the number in quotes. */
static void tag_int(obuf *out, int *first, const char *key, int64_t value) {
  tag_key(out, first, key);
  json_i64_string(out, value);
}

static void tags(obuf *out, const trace *t, const span *s) {
  ob_puts(out, ",\"tags\":{");
  int first = 1;
  char num[32], why[INCOMPLETE_REASON_MAX];
  span_outcome oc;
  span_outcome_get(s, &oc);
  for (size_t i = 0; i < s->n_tags; i++) {
    /* Zipkin's "error" is ours when the span failed: the library's own
     * key-value of that name (the error's name) is error.type's value */
    if (oc.error && strcmp(s->tags[i].key, "error") == 0)
      continue;
    if (s->tags[i].is_int) {
      tag_int(out, &first, s->tags[i].key, s->tags[i].int_value);
    } else {
      tag_str(out, &first, s->tags[i].key, s->tags[i].str_value);
    }
  }
  if (s->status != 0) { /* semconv.h: a failure (ERROR) gets Zipkin's "error" */
    if (oc.error)
      tag_str(out, &first, "error", oc.message);
    tag_str(out, &first, SC_ERROR_TYPE, oc.error_type);
    if (oc.status_code != NULL)
      tag_str(out, &first, SC_RPC_STATUS_CODE, oc.status_code);
    snprintf(num, sizeof(num), "%d", s->status);
    tag_str(out, &first, "hoptrace.status", num);
  }
  if (s->endpoint)
    tag_str(out, &first, "hoptrace.endpoint", s->endpoint);
  if (s->vpid >= 0)
    tag_int(out, &first, "hoptrace.pid", s->vpid);
  if (s->hostname)
    tag_str(out, &first, "hoptrace.host", s->hostname);
  if (s->clock_bound_ns >= 0) { /* aligned: raw time = shown time - shift */
    tag_int(out, &first, "hoptrace.clock.shift_ns", s->clock_shift_ns);
    tag_int(out, &first, "hoptrace.clock.bound_ns", s->clock_bound_ns);
  }
  if (t->incomplete)
    tag_str(out, &first, "hoptrace.incomplete", trace_incomplete_reason(t, why, sizeof(why)));
  char unfinished[96];
  if (span_unfinished(s, unfinished, sizeof(unfinished)) != NULL)
    tag_str(out, &first, UNFINISHED_KEY, unfinished);
  if (root_sampling_probability(t, s, num, sizeof(num)) != NULL)
    tag_str(out, &first, SAMPLING_PROBABILITY_KEY, num);
  if (root_sampling_probability_invalid(t, s, num, sizeof(num)) != NULL)
    tag_str(out, &first, SAMPLING_PROBABILITY_INVALID_KEY, num);
  ob_putc(out, '}');
}

static int64_t span_start_ns(const span *s) {
  return span_shown_start_ns(s);
}

/* Zipkin's microseconds: the start rounded down and the end up, so that
 * start + duration covers the span and every annotation in it (each
 * truncated on its own, a span ended up to 1 us before its "cr"). */
static int64_t floor_us(int64_t ns) { return ns / 1000 - (ns % 1000 < 0); }
static int64_t ceil_us(int64_t ns) { return ns / 1000 + (ns % 1000 > 0); }

static void zipkin_span(output *o, const trace *t, const span *s) {
  obuf *out = o->out;
  ob_puts(out, o->first ? "\n" : ",\n");
  o->first = 0;
  ob_puts(out, "{\"traceId\":");
  json_trace_id(out, t->trace_hi, t->trace_lo, 1);
  ob_puts(out, ",\"id\":");
  json_hex64(out, s->id);
  if (s->parent_id) {
    ob_puts(out, ",\"parentId\":");
    json_hex64(out, s->parent_id);
  }
  ob_puts(out, ",\"name\":");
  json_string(out, s->name ? s->name : "unknown");
  const char *kind = zipkin_kind(s->kind);
  if (kind) {
    ob_puts(out, ",\"kind\":\"");
    ob_puts(out, kind);
    ob_putc(out, '"');
  }
  ob_puts(out, ",\"timestamp\":");
  json_i64(out, floor_us(span_start_ns(s)));
  /* ending before it starts: no duration at all rather than a false one
   * (the span is flagged END_BEFORE_START_KEY) */
  if (s->started && s->ended && s->end_ns >= s->start_ns) {
    int64_t us = s->end_ns > s->start_ns ? ceil_us(s->end_ns) - floor_us(s->start_ns) : 1;
    ob_puts(out, ",\"duration\":");
    json_i64(out, us > 0 ? us : 1);
  }
  if (s->flags & 2u)
    ob_puts(out, ",\"debug\":true");
  endpoint(o, "localEndpoint", s->service ? s->service : "unknown", s->endpoint);
  if (s->peer)
    endpoint(o, "remoteEndpoint", NULL, s->peer);
  ob_puts(out, ",\"annotations\":[");
  for (size_t i = 0; i < s->n_annotations; i++) {
    ob_puts(out, i ? ",{\"timestamp\":" : "{\"timestamp\":");
    json_i64(out, floor_us(s->annotations[i].ts_ns));
    ob_puts(out, ",\"value\":");
    json_string(out, s->annotations[i].value);
    ob_putc(out, '}');
  }
  ob_putc(out, ']');
  tags(out, t, s);
  ob_putc(out, '}');
}

static void zipkin_trace(output *o, const trace *t) {
  for (size_t i = 0; i < t->n_spans; i++)
    zipkin_span(o, t, t->spans[i]);
}

static int zipkin_close(output *o, const bt_source_stats *src, const assembler_stats *st) {
  (void)src;
  (void)st;
  ob_puts(o->out, o->first ? "]\n" : "\n]\n");
  int rc = obuf_error(o->out) ? -1 : 0;
  free(o);
  return rc;
}

const output_format output_zipkin = {"zipkin", zipkin_open, zipkin_trace, zipkin_close};
