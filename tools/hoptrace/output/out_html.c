/* `hoptrace view`: one self-contained HTML file (inline CSS and script,
 * a Content-Security-Policy that forbids every fetch): a sortable,
 * filterable trace list and a waterfall for the trace selected. The page
 * (output/view/: view.css, view.js, embedded at build time) reads the
 * traces from a text block streamed as they are assembled, one line each:
 *   S"text"                       the next entry of the string table
 *   T[header]<TAB>[span,...]      a trace
 * header = [trace id, start (epoch us), duration (ns), spans, root service,
 *           root operation, flags (1 a span ERROR, 2 incomplete), [services],
 *           [operations], incomplete reason]
 * span   = [id, parent, service, operation, kind, status, start (ns from
 *           the trace's start), duration (ns, -1 unfinished),
 *           [time, annotation, ...], [key, value, ...], status message,
 *           error type]
 * A last line "A" holds the aggregate critical path of all the traces
 * (the report's, report_cpagg.h: cp_agg_json on one line).
 * The last two only when the status is not 0: the description and
 * error.type when the span is ERROR (semconv.h's rule: a failed call, a
 * server's own fault), else the message and null (a server span that
 * answered the caller's error: UNSET, not drawn red).
 * A text is a number (string table index) or a string (written inline:
 * html_strtab.h). parent: the parent's index in the trace's span list,
 * -1 for none, or the parent's id (a string) when it never arrived. Spans
 * come in depth-first order, so the page parses only the clicked trace. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/html_strtab.h"
#include "output/json.h"
#include "output/output.h"
#include "output/report_cpagg.h"
#include "output/semconv.h"
#include "read/limits.h"

extern const char html_view_css[], html_view_js[]; /* view_assets.c, generated */

typedef struct visit {
  const span *s;
  int32_t parent; /* index of the parent in the output order, -1: none */
} visit;

struct output {
  obuf *out;
  html_strtab *strs;
  visit *stack; /* depth-first walk, reused by every trace */
  size_t cap;
  uint32_t *seen; /* per string index: the trace that listed it last */
  uint32_t trace_no;
  uint64_t page_bytes; /* the traces' text so far, about (page_bytes_of) */
  cp_agg *cpagg;       /* over every trace, those left off the page too */
};

static output *html_open(obuf *out, const output_info *info) {
  (void)info;
  output *o = calloc(1, sizeof(*o));
  if (o == NULL || (o->strs = html_strtab_new()) == NULL ||
      (o->seen = calloc(HTML_STRTAB_MAX, sizeof(*o->seen))) == NULL ||
      (o->cpagg = cp_agg_new()) == NULL) {
    if (o != NULL) {
      html_strtab_free(o->strs);
      free(o->seen);
    }
    free(o);
    return NULL;
  }
  o->out = out;
  ob_puts(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
               "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
               "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
               "<title>hoptrace waterfall</title>\n<style>\n");
  ob_puts(out, html_view_css);
  ob_puts(out, "</style></head><body>\n<div id=\"app\"></div>\n"
               "<script type=\"text/x-hoptrace\" id=\"data\">\n");
  return o;
}

static int64_t trace_start(const trace *t) {
  int64_t start = INT64_MAX;
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    int64_t at = span_shown_start_ns(s);
    if (at && at < start)
      start = at;
  }
  return start == INT64_MAX ? 0 : start;
}

/* ns - base in integers (through doubles, epoch times lost up to 256 ns),
 * saturated: a hostile clock can put them further apart than int64. */
static int64_t rel_ns(int64_t ns, int64_t base) {
  int64_t d;
  if (__builtin_sub_overflow(ns, base, &d))
    return ns < base ? INT64_MIN : INT64_MAX;
  return d;
}

static int64_t span_begin(const span *s, int64_t base) {
  int64_t at = span_shown_start_ns(s);
  return at != 0 ? at : base;
}

/* The fixed keys of what the model holds beside the span's own tags. */
static const char *const K_ENDPOINT = "hoptrace.endpoint", *const K_PEER = "hoptrace.peer",
                  *const K_HOST = "hoptrace.host", *const K_PROCESS = "hoptrace.process",
                  *const K_PID = "hoptrace.pid", *const K_TID = "hoptrace.tid",
                  *const K_DEBUG = "hoptrace.debug", *const K_SHIFT = "hoptrace.clock.shift_ns",
                  *const K_BOUND = "hoptrace.clock.bound_ns";

/* A text: defs != NULL adds it to the table (its "S" line), else writes
 * its index or, when not in the table, the text itself. */
static void text(output *o, obuf *defs, const char *s) {
  int32_t ref = html_strtab_ref(o->strs, defs, s);
  if (defs != NULL)
    return;
  if (ref >= 0)
    json_i64(o->out, ref);
  else
    json_string(o->out, s);
}

static void tag_text(output *o, obuf *defs, int *n, const char *key, const char *value) {
  if (defs == NULL && (*n)++)
    ob_putc(o->out, ',');
  text(o, defs, key);
  if (defs == NULL)
    ob_putc(o->out, ',');
  text(o, defs, value);
}

static void tag_int(output *o, obuf *defs, int *n, const char *key, int64_t value) {
  if (defs == NULL && (*n)++)
    ob_putc(o->out, ',');
  text(o, defs, key);
  if (defs == NULL) {
    ob_putc(o->out, ',');
    json_i64_string(o->out, value);
  }
}

/* The span's texts: added to the table (defs) or written (defs NULL). */
static void span_tags(output *o, obuf *defs, const span *s) {
  int n = 0;
  for (size_t i = 0; i < s->n_tags; i++) {
    if (s->tags[i].is_int)
      tag_int(o, defs, &n, s->tags[i].key, s->tags[i].int_value);
    else
      tag_text(o, defs, &n, s->tags[i].key, s->tags[i].str_value);
  }
  const char *const named[][2] = {{K_ENDPOINT, s->endpoint}, {K_PEER, s->peer},
                                  {K_HOST, s->hostname}, {K_PROCESS, s->procname}};
  for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
    if (named[i][1] != NULL)
      tag_text(o, defs, &n, named[i][0], named[i][1]);
  if (s->vpid >= 0)
    tag_int(o, defs, &n, K_PID, s->vpid);
  if (s->vtid >= 0)
    tag_int(o, defs, &n, K_TID, s->vtid);
  if (s->flags & 2u)
    tag_text(o, defs, &n, K_DEBUG, "true");
  if (s->clock_bound_ns >= 0) { /* aligned: raw time = shown time - shift */
    tag_int(o, defs, &n, K_SHIFT, s->clock_shift_ns);
    tag_int(o, defs, &n, K_BOUND, s->clock_bound_ns);
  }
  char unfinished[96];
  if (span_unfinished(s, unfinished, sizeof(unfinished)) != NULL)
    tag_text(o, defs, &n, UNFINISHED_KEY, unfinished);
}

static void span_texts(output *o, obuf *defs, const span *s) {
  text(o, defs, s->service ? s->service : "?");
  text(o, defs, s->name ? s->name : "unknown");
  for (size_t i = 0; i < s->n_annotations; i++)
    text(o, defs, s->annotations[i].value);
  span_tags(o, defs, s);
  if (s->status != 0) {
    span_outcome oc;
    span_outcome_get(s, &oc);
    text(o, defs, oc.error ? oc.message : s->status_message);
    if (oc.error)
      text(o, defs, oc.error_type);
  }
}

static void html_span(output *o, const span *s, int32_t parent, int64_t base) {
  obuf *out = o->out;
  ob_putc(out, '[');
  json_hex64(out, s->id);
  ob_putc(out, ',');
  if (parent >= 0 || s->parent_id == 0)
    json_i64(out, parent);
  else
    json_hex64(out, s->parent_id); /* never arrived */
  ob_putc(out, ',');
  text(o, NULL, s->service ? s->service : "?");
  ob_putc(out, ',');
  text(o, NULL, s->name ? s->name : "unknown");
  ob_printf(out, ",%d,%d,", s->kind, s->status);
  int64_t start = rel_ns(span_begin(s, base), base);
  json_i64(out, start);
  ob_putc(out, ',');
  json_i64(out, s->started && s->ended ? span_duration_ns(s) : -1);
  ob_puts(out, ",[");
  for (size_t i = 0; i < s->n_annotations; i++) {
    if (i)
      ob_putc(out, ',');
    json_i64(out, rel_ns(s->annotations[i].ts_ns, base));
    ob_putc(out, ',');
    text(o, NULL, s->annotations[i].value);
  }
  ob_puts(out, "],[");
  span_tags(o, NULL, s);
  ob_putc(out, ']');
  if (s->status != 0) {
    span_outcome oc;
    span_outcome_get(s, &oc);
    ob_putc(out, ',');
    text(o, NULL, oc.error ? oc.message : s->status_message);
    ob_putc(out, ',');
    if (oc.error)
      text(o, NULL, oc.error_type);
    else
      ob_puts(out, "null");
  }
  ob_putc(out, ']');
}

/* Distinct services (field 0) or operations (1) of the trace, by index;
 * texts not in the table are listed too, at most 64 of them. */
static void name_set(output *o, const trace *t, int field) {
  int n = 0, inline_n = 0;
  o->trace_no += o->trace_no + 1 == 0 ? 2 : 1; /* 0 means never seen */
  ob_putc(o->out, '[');
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    const char *name = field ? (s->name ? s->name : "unknown") : (s->service ? s->service : "?");
    int32_t ref = html_strtab_ref(o->strs, NULL, name);
    if (ref >= 0 ? o->seen[ref] == o->trace_no : inline_n++ >= 64)
      continue;
    if (ref >= 0)
      o->seen[ref] = o->trace_no;
    if (n++)
      ob_putc(o->out, ',');
    text(o, NULL, name);
  }
  ob_putc(o->out, ']');
}

static void html_header(output *o, const trace *t, int64_t base, const span *root) {
  char why[INCOMPLETE_REASON_MAX];
  int64_t end = base;
  int flags = t->incomplete ? 2 : 0;
  for (size_t i = 0; i < t->n_spans; i++) {
    if (t->spans[i]->ended && t->spans[i]->end_ns > end)
      end = t->spans[i]->end_ns;
    span_outcome oc;
    if (t->spans[i]->status != 0 && (span_outcome_get(t->spans[i], &oc), oc.error))
      flags |= 1;
  }
  obuf *out = o->out;
  ob_puts(out, "T[");
  json_trace_id(out, t->trace_hi, t->trace_lo, 0);
  ob_putc(out, ',');
  json_i64(out, base / 1000 - (base % 1000 < 0)); /* floor: exact epoch us */
  ob_putc(out, ',');
  json_i64(out, rel_ns(end, base));
  ob_printf(out, ",%zu,", t->n_spans);
  text(o, NULL, root && root->service ? root->service : "?");
  ob_putc(out, ',');
  text(o, NULL, root && root->name ? root->name : "unknown");
  ob_printf(out, ",%d,", flags);
  name_set(o, t, 0);
  ob_putc(out, ',');
  name_set(o, t, 1);
  ob_putc(out, ',');
  json_string(out, t->incomplete ? trace_incomplete_reason(t, why, sizeof(why)) : "");
  ob_puts(out, "]\t");
}

static int grow_stack(output *o, size_t n) {
  if (n <= o->cap)
    return 0;
  visit *v = realloc(o->stack, n * sizeof(*v));
  if (v == NULL)
    return -1;
  o->stack = v;
  o->cap = n;
  return 0;
}

/* Depth-first from the roots (the assembler cut parent cycles, so every
 * span is reached once), each span after its parent; without the links
 * (or memory for the walk), in the trace's order with parents by id. */
static void html_spans(output *o, const trace *t, int64_t base) {
  size_t top = 0, written = 0;
  if (t->roots != NULL && grow_stack(o, t->n_spans) == 0)
    for (size_t i = t->n_roots; i-- > 0 && top < o->cap;)
      o->stack[top++] = (visit){t->roots[i], -1};
  while (top > 0) {
    visit v = o->stack[--top];
    if (written)
      ob_putc(o->out, ',');
    html_span(o, v.s, v.parent, base);
    int32_t self = (int32_t)written++;
    for (uint32_t k = v.s->n_children; k-- > 0 && top < o->cap;)
      o->stack[top++] = (visit){v.s->children[k], self};
  }
  if (written == 0)
    for (size_t i = 0; i < t->n_spans; i++) {
      if (i)
        ob_putc(o->out, ',');
      html_span(o, t->spans[i], -1, base);
    }
}

/* About what a trace takes on the page, never less: its texts and a
 * span's numbers. */
static uint64_t page_bytes_of(const trace *t) {
  uint64_t n = 256;
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    n += 256 + (s->name ? strlen(s->name) : 0) + (s->service ? strlen(s->service) : 0) +
         (s->status_message ? strlen(s->status_message) : 0);
    for (size_t k = 0; k < s->n_tags; k++)
      n += 16 + strlen(s->tags[k].key) + (s->tags[k].str_value ? strlen(s->tags[k].str_value) : 0);
    for (size_t k = 0; k < s->n_annotations; k++)
      n += 32 + strlen(s->annotations[k].value);
  }
  return n;
}

static void html_trace(output *o, const trace *t) {
  cp_agg_add(o->cpagg, t); /* what it could not keep, its JSON says */
  uint64_t bytes = page_bytes_of(t);
  if (o->page_bytes + bytes > ht_limits.page_bytes) {
    ht_drops.page_traces++; /* a page a browser can still open */
    return;
  }
  o->page_bytes += bytes;
  for (size_t i = 0; i < t->n_spans; i++)
    span_texts(o, o->out, t->spans[i]); /* "S" lines first */
  int64_t base = trace_start(t);
  const span *root = t->roots && t->n_roots ? t->roots[0] : t->n_spans ? t->spans[0] : NULL;
  html_header(o, t, base, root);
  ob_putc(o->out, '[');
  html_spans(o, t, base);
  ob_puts(o->out, "]\n");
}

/* The "A" line: cp_agg_json through a memory stream, its line breaks
 * (between tokens only: a string's are escaped) left out. */
static void html_cpagg(output *o) {
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  obuf *b = mem ? obuf_new(mem) : NULL;
  if (b != NULL) {
    cp_agg_json(o->cpagg, b);
    int bad = obuf_flush(b);
    obuf_free(b);
    int ok = fclose(mem) == 0 && bad == 0 && text != NULL;
    if (ok && o->page_bytes + len > ht_limits.page_bytes) {
      /* its names are the traces' (hostile ones 64 KiB each): it counts
       * in the page's size as the traces do */
      ht_drops.page_aggregate = len;
      ob_printf(o->out, "A{\"operations\":[],\"left_out_bytes\":%zu}\n", len);
    } else if (ok) {
      ob_putc(o->out, 'A');
      for (const char *p = text, *nl; p < text + len; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(text + len - p));
        if (nl == NULL)
          nl = text + len;
        ob_write(o->out, p, (size_t)(nl - p));
      }
      ob_putc(o->out, '\n');
    }
    mem = NULL;
  }
  if (mem != NULL)
    fclose(mem);
  free(text);
}

static int html_close(output *o, const bt_source_stats *src, const assembler_stats *st) {
  (void)src;
  (void)st;
  html_cpagg(o);
  ob_puts(o->out, "</script>\n<script>\n");
  ob_puts(o->out, html_view_js);
  ob_puts(o->out, "</script></body></html>\n");
  int rc = obuf_error(o->out) ? -1 : 0;
  html_strtab_free(o->strs);
  cp_agg_free(o->cpagg);
  free(o->stack);
  free(o->seen);
  free(o);
  return rc;
}

const output_format output_html = {"html", html_open, html_trace, html_close};
