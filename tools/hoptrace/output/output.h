/* Output formats. Each writes a valid document even for zero traces,
 * streaming one trace at a time (memory does not grow with the input). */
#ifndef HT_TOOL_OUTPUT_H
#define HT_TOOL_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "assemble/assemble.h"
#include "output/obuf.h"
#include "read/bt_source.h"

typedef struct output output;
typedef struct align_state align_state;
typedef struct host_health host_health;

/* What a format may want to know about the run; valid until close. */
typedef struct output_info {
  const align_state *align; /* NULL: clocks not aligned (one host, or --align off) */
  int n_hosts;              /* distinct hosts in the input (0: unknown) */
  const host_health *hosts; /* per host: events, losses, missing spans */
  int64_t stall_ns;         /* a host quiet this long before the end stalled */
  bool follow;              /* live: the output is read while it grows */
  /* flight snapshots: the capture.json files beside them (NULL: none
   * looked for) */
  const struct capture_files *captures;
  void *user; /* the caller's, for a format of its own (hoptrace diff) */
} output_info;

typedef struct output_format {
  const char *name;
  output *(*open)(obuf *out, const output_info *info); /* both stay the caller's */
  void (*trace)(output *o, const trace *t);
  /* Writes the closing part and frees o. 0, or -1 on a write error. */
  int (*close)(output *o, const bt_source_stats *src, const assembler_stats *asm_stats);
} output_format;

extern const output_format output_zipkin;
extern const output_format output_otlp;
extern const output_format output_chrome;
extern const output_format output_report;
extern const output_format output_report_json; /* report --format json */
extern const output_format output_html;

/* Shared by the formats: why a trace is incomplete ("" when complete).
 * buf: INCOMPLETE_REASON_MAX bytes hold every reason with two host
 * names (Linux's 64 bytes each); longer ones are cut. */
#define INCOMPLETE_REASON_MAX 704
const char *trace_incomplete_reason(const trace *t, char *buf, size_t cap);
/* The tag/attribute a trace's root span carries: the probability its
 * trace was sampled with (decimal text, "0.25"), NULL when s is not
 * that root or the probability is unknown. buf: 32 bytes. */
#define SAMPLING_PROBABILITY_KEY "hoptrace.sampling.probability"
const char *root_sampling_probability(const trace *t, const span *s, char *buf,
                                      size_t cap);
/* The probability the root recorded when it is impossible (outside
 * (0, 1]: "2", "0"), on that root only, NULL otherwise: the trace's p is
 * then unknown (no SAMPLING_PROBABILITY_KEY). buf: 32 bytes. */
/* A span never started or never ended (its trace is incomplete): what
 * the tag/attribute/arg UNFINISHED_KEY says ("never started: shown from
 * the earliest time known for it", "never ended", both; a root says
 * "unfinished root: ..."), NULL for a whole span. buf: 96 bytes. */
#define UNFINISHED_KEY "hoptrace.unfinished"
const char *span_unfinished(const span *s, char *buf, size_t cap);
#define SAMPLING_PROBABILITY_INVALID_KEY "hoptrace.sampling.probability.invalid"
const char *root_sampling_probability_invalid(const trace *t, const span *s, char *buf,
                                              size_t cap);

#endif
