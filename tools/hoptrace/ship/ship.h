/* `hoptrace export --to URL`: the spans the pipeline emits, pushed in
 * batches of SHIP_BATCH_SPANS to an OTLP/HTTP or Zipkin endpoint, once
 * (a file input; live inputs are pushed trace by trace too, but
 * without retries). What is not there yet: retries with back-off on
 * 429/502/503/504 and connection errors (such a batch is dropped and
 * counted), a byte/time batch limit and the memory-capped queue,
 * periodic summaries and the bounded flush at SIGINT for --follow. */
#ifndef HT_SHIP_SHIP_H
#define HT_SHIP_SHIP_H

#include <stdbool.h>

#include "output/output.h"

#define SHIP_BATCH_SPANS 512

typedef struct ship_options {
  const char *to;     /* URL or "env" (config.h) */
  const char *format; /* otlp, otlp-json, zipkin */
  bool allow_drops;
  bool quiet;
} ship_options;

/* The output format that pushes, configured from opts (one run a
 * process), or NULL with the reason on stderr. */
const output_format *ship_output(const ship_options *opts);
/* The run's exit status given the pipeline's rc: 2 when spans were
 * dropped or rejected (unless allow_drops). */
int ship_exit_status(int rc);

#endif
