/* Test helper: the whole document a format writes for one trace, as a
 * malloc'd string (cmocka asserts on any failure). Used by
 * tests/tool/test_html.c and tests/tool/test_assemble_integrity.c. */
#ifndef HT_TEST_EXPORT_TEXT_H
#define HT_TEST_EXPORT_TEXT_H

#include <stdio.h>

#include "output/output.h"

static inline char *export_text(const output_format *fmt, const trace *t) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  obuf *ob = obuf_new(f);
  output *o = fmt->open(ob, &(output_info){0});
  assert_non_null(o);
  fmt->trace(o, t);
  assert_int_equal(fmt->close(o, &(bt_source_stats){0}, &(assembler_stats){0}), 0);
  assert_int_equal(obuf_flush(ob), 0);
  obuf_free(ob);
  fclose(f);
  return text;
}

#endif
