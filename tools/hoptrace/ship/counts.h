/* What became of the spans pushed: every span read ends in exactly one
 * of accepted, rejected (OTLP partial success) or a dropped reason, or
 * is still queued; retries count posts, not spans. */
#ifndef HT_SHIP_COUNTS_H
#define HT_SHIP_COUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ship/partial.h"

typedef struct ship_counts {
  uint64_t read, sent, accepted, rejected;
  uint64_t dropped_status;    /* a reply not worth retrying (400, ...) */
  uint64_t dropped_retryable; /* 429/502/503/504 until the retries ran out */
  uint64_t dropped_transport; /* no reply until the retries ran out */
  uint64_t dropped_encode;    /* out of memory encoding */
  uint64_t dropped_queue;     /* --follow: the queue was full */
  uint64_t dropped_shutdown;  /* still queued when the shutdown's time was up */
  uint64_t dropped_dead;      /* not sent: the collector was taken for dead */
  bool collector_dead;        /* ... and so it was (sender.h give_up_s) */
  uint64_t batches, retries;
  uint64_t replaced; /* invalid UTF-8 sequences of the trace written as U+FFFD */
  /* Partial successes whose rejected count was impossible (negative, more
   * than the batch, not a number): the last one's word and what was
   * counted; the collector's first errorMessage (partial.h: made safe). */
  uint64_t partial_impossible;
  int64_t partial_reported;
  uint64_t partial_spans, partial_counted;
  char collector_message[PARTIAL_MESSAGE_MAX + 4];
  size_t queue_bytes, queue_peak_bytes, queue_peak_batches;
} ship_counts;

uint64_t counts_dropped(const ship_counts *c);
/* Spans read and not yet accounted for (queued, in the batch in hand or
 * being posted). */
uint64_t counts_pending(const ship_counts *c);
/* "R spans read, S sent, ..." (sent: a server answered; once a batch),
 * then the U+FFFD count when there is one, the impossible partial
 * successes and the collector's message when there are, without a line
 * end. */
void counts_print(FILE *f, const ship_counts *c);

#endif
