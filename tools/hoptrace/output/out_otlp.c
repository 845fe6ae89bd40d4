/* OTLP/JSON ExportTraceServiceRequest: one ResourceSpans per resource
 * (service, host, process: otlp_groups.h) and, with --follow, one per
 * resource of each trace as it comes (the file is read while it grows).
 * Ids hex, times as nanosecond strings, kind as the OTLP enum; what a
 * span becomes is otlp_map.h's, shared with the protobuf push. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/json.h"
#include "output/otlp_groups.h"
#include "output/otlp_map.h"
#include "output/output.h"

struct output {
  obuf *out;
  bool any;             /* a ResourceSpans was written */
  otlp_groups *groups;  /* NULL: one block per resource of each trace */
};

static const char BLOCK_TAIL[] = "]}]}";

static output *otlp_open(obuf *out, const output_info *info) {
  output *o = calloc(1, sizeof(*o));
  if (o == NULL)
    return NULL;
  o->out = out;
  /* no spill file ($TMPDIR unwritable): still a valid document, one
   * block per resource of each trace, and said so */
  if (!info->follow && (o->groups = otlp_groups_new()) == NULL)
    fprintf(stderr, "hoptrace: otlp: no spill file in %s (%s): one ResourceSpans per trace\n",
            getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", strerror(errno));
  ob_puts(out, "{\"resourceSpans\":[");
  return o;
}

typedef struct attr_list {
  obuf *out;
  int first;
} attr_list;

static void attr_json(void *arg, const otlp_attr *a) {
  attr_list *l = arg;
  ob_puts(l->out, l->first ? "{\"key\":" : ",{\"key\":");
  l->first = 0;
  json_string(l->out, a->key);
  if (a->is_int) {
    ob_puts(l->out, ",\"value\":{\"intValue\":");
    json_i64_string(l->out, a->int_value);
  } else {
    ob_puts(l->out, ",\"value\":{\"stringValue\":");
    json_string(l->out, a->str_value);
  }
  ob_puts(l->out, "}}");
}

static void otlp_span(obuf *out, const trace *t, const span *s, int first) {
  otlp_span_fields f;
  otlp_span_fields_get(s, &f);
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
  ob_puts(out, ",\"kind\":");
  json_i64(out, f.kind);
  ob_puts(out, ",\"startTimeUnixNano\":");
  json_i64_string(out, f.start_ns);
  ob_puts(out, ",\"endTimeUnixNano\":");
  json_i64_string(out, f.end_ns);
  ob_puts(out, ",\"attributes\":[");
  attr_list l = {out, 1};
  otlp_span_attrs(t, s, attr_json, &l);
  ob_puts(out, "],\"events\":[");
  for (size_t i = 0; i < s->n_annotations; i++) {
    ob_puts(out, i ? ",{\"timeUnixNano\":" : "{\"timeUnixNano\":");
    json_i64_string(out, s->annotations[i].ts_ns);
    ob_puts(out, ",\"name\":");
    json_string(out, s->annotations[i].value);
    ob_putc(out, '}');
  }
  ob_puts(out, "],\"status\":{");
  if (f.status_code != OTLP_STATUS_UNSET) {
    ob_puts(out, "\"code\":");
    json_i64(out, f.status_code);
    ob_puts(out, ",\"message\":");
    json_string(out, f.status_message);
  }
  ob_puts(out, "}}");
}

static void resource_head(obuf *out, const span *s) {
  ob_puts(out, "{\"resource\":{\"attributes\":[");
  attr_list l = {out, 1};
  otlp_resource_attrs(s, attr_json, &l);
  ob_puts(out, "]},\"scopeSpans\":[{\"scope\":{\"name\":\"" OTLP_SCOPE_NAME "\"},\"spans\":[");
}

/* The resource blocks of one trace, written now (--follow, or a
 * resource past the groups' bound). Traces are small: quadratic is fine. */
static void trace_blocks(output *o, const trace *t, const char *done_in) {
  char *done = calloc(t->n_spans ? t->n_spans : 1, 1);
  if (done == NULL)
    return;
  for (size_t i = 0; i < t->n_spans; i++) {
    if (done[i] || (done_in && done_in[i]))
      continue;
    ob_puts(o->out, o->any ? ",\n" : "\n");
    o->any = true;
    resource_head(o->out, t->spans[i]);
    int first = 1;
    for (size_t j = i; j < t->n_spans; j++) {
      if (!done[j] && !(done_in && done_in[j]) &&
          otlp_same_resource(t->spans[i], t->spans[j])) {
        done[j] = 1;
        otlp_span(o->out, t, t->spans[j], first);
        first = 0;
      }
    }
    ob_puts(o->out, BLOCK_TAIL);
  }
  free(done);
}

static void otlp_trace(output *o, const trace *t) {
  if (o->groups == NULL) {
    trace_blocks(o, t, NULL);
    return;
  }
  char *grouped = calloc(t->n_spans ? t->n_spans : 1, 1);
  if (grouped == NULL)
    return;
  size_t left = 0;
  for (size_t i = 0; i < t->n_spans; i++) {
    bool *first;
    obuf *b = otlp_groups_buf(o->groups, t->spans[i], resource_head, &first);
    if (b == NULL) {
      left++;
      continue;
    }
    otlp_span(b, t, t->spans[i], *first);
    *first = false;
    grouped[i] = 1;
  }
  if (left)
    trace_blocks(o, t, grouped);
  free(grouped);
}

static int otlp_close(output *o, const bt_source_stats *src, const assembler_stats *st) {
  (void)src;
  (void)st;
  int rc = 0;
  if (o->groups != NULL && otlp_groups_finish(o->groups, o->out, BLOCK_TAIL, &o->any) != 0)
    rc = -1;
  ob_puts(o->out, "\n]}\n");
  if (obuf_error(o->out))
    rc = -1;
  free(o);
  return rc;
}

const output_format output_otlp = {"otlp", otlp_open, otlp_trace, otlp_close};
