/* `hoptrace export --to URL`: the spans the pipeline emits, cut into
 * batches (SHIP_BATCH_SPANS spans, SHIP_BATCH_BYTES bytes or
 * SHIP_BATCH_MS since the batch's first span, whichever comes first),
 * queued and POSTed with retries by sender.h to an OTLP/HTTP or Zipkin
 * endpoint, once (a file input) or continuously (--follow). */
#ifndef HT_SHIP_SHIP_H
#define HT_SHIP_SHIP_H

#include <stdbool.h>

#include "output/output.h"

#define SHIP_BATCH_SPANS 512                 /* OpenTelemetry's batch processor's */
#define SHIP_BATCH_BYTES ((size_t)4 << 20)   /* a batch's encoded size, about */
#define SHIP_BATCH_MS 5000                   /* OpenTelemetry's schedule delay */
#define SHIP_QUEUE_MIB 64                    /* the queue's default cap */
#define SHIP_GIVE_UP_S 120 /* no post accepted this long: the collector is dead */

typedef struct ship_options {
  const char *to;     /* URL or "env" (config.h) */
  const char *format; /* otlp, otlp-json, zipkin */
  const char *headers_file; /* NULL, or headers to send (config.h) */
  bool allow_drops;
  bool quiet;
  int queue_mib;      /* 0: SHIP_QUEUE_MIB */
  int summary_every;  /* s, 0: none */
  int retry_for;      /* s, 0: RETRY_FOR_MS */
  int give_up_after;  /* s, 0: SHIP_GIVE_UP_S; -1: never (sender.h give_up_s) */
  void (*stop_run)(void); /* called when the collector is given up on (may be NULL) */
  int (*interrupted)(void); /* the signal that ended the run, or 0 */
} ship_options;

/* The output format that pushes, configured from opts (one run a
 * process), or NULL with the reason on stderr. */
const output_format *ship_output(const ship_options *opts);
/* The run's exit status given the pipeline's rc: 2 when spans were
 * dropped or rejected (unless allow_drops; always when the collector was
 * given up on), rc when it is not 0 (an interrupted run keeps its 128 +
 * signal). */
int ship_exit_status(int rc);

#endif
