/* INPUT -> babeltrace2 -> assembler -> one output format. */
#ifndef HT_TOOL_PIPELINE_H
#define HT_TOOL_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "output.h"

typedef struct pipeline_options {
  const char *input;
  const output_format *format;
  FILE *out;
  bool filter_trace; /* only the trace below */
  uint64_t trace_hi, trace_lo;
  bool follow;        /* live: flush each trace as it is emitted */
  int64_t grace_ns;   /* see assembler_new */
  int64_t timeout_ns;
  bool quiet;         /* no summary on stderr */
  unsigned decoders;  /* processes decoding a trace directory (bt_source.h) */
} pipeline_options;

/* 0 ok, 1 input error (message on stderr), 2 output error. */
int pipeline_run(const pipeline_options *opts);

#endif
