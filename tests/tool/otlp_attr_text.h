/* Test helper: a span's OTLP attributes (otlp_map.h) as one line of
 * "key=value;" (integers in decimal), to compare whole. Used by
 * tests/tool/test_failures.c and tests/ship/test_otlp_file.c. */
#ifndef HT_TEST_OTLP_ATTR_TEXT_H
#define HT_TEST_OTLP_ATTR_TEXT_H

#include <stdio.h>
#include <string.h>

#include "output/otlp_map.h"

typedef struct attrs {
  char text[2048];
} attrs;

static inline void collect(void *arg, const otlp_attr *a) {
  attrs *l = arg;
  size_t n = strlen(l->text);
  if (a->is_int)
    snprintf(l->text + n, sizeof(l->text) - n, "%s=%lld;", a->key, (long long)a->int_value);
  else
    snprintf(l->text + n, sizeof(l->text) - n, "%s=%s;", a->key, a->str_value);
}

#endif
