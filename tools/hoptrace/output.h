/* Output formats. Each writes a valid document even for zero traces,
 * streaming one trace at a time (memory does not grow with the input). */
#ifndef HT_TOOL_OUTPUT_H
#define HT_TOOL_OUTPUT_H

#include <stdio.h>

#include "assemble.h"
#include "bt_source.h"
#include "obuf.h"

typedef struct output output;

typedef struct output_format {
  const char *name;
  output *(*open)(obuf *out); /* out stays the caller's */
  void (*trace)(output *o, const trace *t);
  /* Writes the closing part and frees o. 0, or -1 on a write error. */
  int (*close)(output *o, const bt_source_stats *src, const assembler_stats *asm_stats);
} output_format;

extern const output_format output_zipkin;
extern const output_format output_otlp;
extern const output_format output_chrome;
extern const output_format output_report;
extern const output_format output_html;

/* Shared by the formats: why a trace is incomplete ("" when complete). */
const char *trace_incomplete_reason(const trace *t, char *buf, size_t cap);

#endif
