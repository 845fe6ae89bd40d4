/* Every format into memory streams, checked at close (fuzz_outputs.h). */
#include "fuzz_outputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "json_valid.h"

enum { F_ZIPKIN, F_OTLP, F_CHROME, F_REPORT_JSON, F_REPORT, F_HTML, N_FORMATS };

typedef struct doc {
  char *text;
  size_t size;
  FILE *file;
  obuf *buf;
  output *out;
} doc;

struct fuzz_outputs {
  doc docs[N_FORMATS];
};

static const output_format *format(int f) {
  static const output_format *const all[N_FORMATS] = {
      &output_zipkin, &output_otlp, &output_chrome, &output_report_json, &output_report,
      &output_html};
  return all[f];
}

fuzz_outputs *fuzz_outputs_open(const output_info *info) {
  fuzz_outputs *o = calloc(1, sizeof(*o));
  FUZZ_CHECK(o != NULL);
  for (int f = 0; f < N_FORMATS; f++) {
    doc *d = &o->docs[f];
    d->file = open_memstream(&d->text, &d->size);
    d->buf = d->file != NULL ? obuf_new(d->file) : NULL;
    d->out = d->buf != NULL ? format(f)->open(d->buf, info) : NULL;
    FUZZ_CHECK(d->out != NULL);
  }
  return o;
}

void fuzz_outputs_trace(fuzz_outputs *o, const trace *t) {
  for (int f = 0; f < N_FORMATS; f++)
    format(f)->trace(o->docs[f].out, t);
}

static void check_json(const char *what, const char *s, size_t n) {
  size_t at = 0;
  if (json_valid(s, n, &at))
    return;
  size_t from = at > 60 ? at - 60 : 0;
  fprintf(stderr, "%s: not JSON at byte %zu of %zu: ...%.*s<HERE>%.*s...\n", what, at, n,
          (int)(at - from), s + from, (int)(n - at < 60 ? n - at : 60), s + at);
  FUZZ_CHECK(!"every output is valid JSON");
}

/* The page's data block, line by line as its script reads it: "S" and a
 * JSON string (a text of the table), "T", a JSON header, a tab and a
 * JSON array of spans, or "A" and the aggregate critical path's object. */
static void check_page(const char *page, size_t n) {
  static const char open_tag[] = "<script type=\"text/x-hoptrace\" id=\"data\">\n";
  const char *begin = strstr(page, open_tag);
  FUZZ_CHECK(begin != NULL);
  begin += strlen(open_tag);
  const char *end = strstr(begin, "</script>");
  FUZZ_CHECK(end != NULL && (size_t)(end - page) < n);
  for (const char *line = begin; line < end;) {
    const char *nl = memchr(line, '\n', (size_t)(end - line));
    FUZZ_CHECK(nl != NULL);
    if (*line == 'S') {
      check_json("waterfall text", line + 1, (size_t)(nl - line - 1));
    } else if (*line == 'A') {
      check_json("waterfall critical path", line + 1, (size_t)(nl - line - 1));
    } else {
      FUZZ_CHECK(*line == 'T');
      const char *tab = memchr(line, '\t', (size_t)(nl - line));
      FUZZ_CHECK(tab != NULL);
      check_json("waterfall header", line + 1, (size_t)(tab - line - 1));
      check_json("waterfall spans", tab + 1, (size_t)(nl - tab - 1));
    }
    line = nl + 1;
  }
}

void fuzz_outputs_close(fuzz_outputs *o, const assembler_stats *st) {
  static const char *const names[N_FORMATS] = {"zipkin", "otlp", "chrome", "report json",
                                                "report", "waterfall"};
  bt_source_stats src = {0};
  for (int f = 0; f < N_FORMATS; f++) {
    doc *d = &o->docs[f];
    FUZZ_CHECK(format(f)->close(d->out, &src, st) == 0);
    FUZZ_CHECK(obuf_flush(d->buf) == 0);
    obuf_free(d->buf);
    FUZZ_CHECK(fclose(d->file) == 0);
    if (f == F_HTML)
      check_page(d->text, d->size);
    else if (f != F_REPORT)
      check_json(names[f], d->text, d->size);
    free(d->text);
  }
  free(o);
}
