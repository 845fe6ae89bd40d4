/* An OTLP/HTTP 2xx reply's partial success (protobuf or JSON): how many
 * spans of the batch the collector says it rejected, and its message.
 * The collector's count is its word, not ours: a negative one or one
 * larger than the batch is the collector's error, counted as what it can
 * prove (0 rejected when negative: the 2xx took the batch; the whole
 * batch when larger) and flagged, never taken as is. */
#ifndef HT_SHIP_PARTIAL_H
#define HT_SHIP_PARTIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ship/config.h"

#define PARTIAL_MESSAGE_MAX 200 /* bytes of the collector's message kept */

typedef struct partial_success {
  bool unreadable;  /* protobuf: the body is no ExportTraceServiceResponse */
  bool impossible;  /* rejected_spans < 0, > the batch, or not a number */
  int64_t reported; /* rejected_spans as the collector wrote it (clamped to int64) */
  uint64_t rejected; /* what is counted: 0 .. spans */
  /* errorMessage: valid UTF-8, every control byte (C0, DEL, C1) as '?',
   * at most PARTIAL_MESSAGE_MAX bytes ("..." when cut); "" when none */
  char message[PARTIAL_MESSAGE_MAX + 4];
  bool cut; /* the message was longer */
} partial_success;

/* The reply body (len bytes; not NUL-terminated) of a batch of spans in
 * format (Zipkin's replies carry no partial success: nothing rejected). */
void partial_success_parse(ship_format format, const uint8_t *body, size_t len, size_t spans,
                           partial_success *out);

#endif
