/* ship_counts (counts.h). */
#include "ship/counts.h"

#include <inttypes.h>

uint64_t counts_dropped(const ship_counts *c) {
  return c->dropped_status + c->dropped_retryable + c->dropped_transport + c->dropped_encode +
         c->dropped_queue + c->dropped_shutdown + c->dropped_dead;
}

uint64_t counts_pending(const ship_counts *c) {
  return c->read - c->accepted - c->rejected - counts_dropped(c);
}

void counts_print(FILE *f, const ship_counts *c) {
  fprintf(f,
          "%" PRIu64 " spans read, %" PRIu64 " sent, %" PRIu64 " accepted, %" PRIu64
          " rejected, %" PRIu64 " dropped (%" PRIu64 " refused by HTTP status, %" PRIu64
          " retryable status, %" PRIu64 " connection, %" PRIu64 " encoding, %" PRIu64
          " queue full, %" PRIu64 " shutdown, %" PRIu64 " collector dead), %" PRIu64
          " pending, %" PRIu64 " batches, %" PRIu64 " retries, queue peak %zu bytes in %zu"
          " batches",
          c->read, c->sent, c->accepted, c->rejected, counts_dropped(c), c->dropped_status,
          c->dropped_retryable, c->dropped_transport, c->dropped_encode, c->dropped_queue,
          c->dropped_shutdown, c->dropped_dead, counts_pending(c), c->batches, c->retries,
          c->queue_peak_bytes, c->queue_peak_batches);
  if (c->partial_impossible > 0)
    fprintf(f,
            ", %" PRIu64 " partial success%s with an impossible rejected count (the collector's"
            " error; the last: %" PRId64 " of a batch of %" PRIu64 ", counted as %" PRIu64
            " rejected)",
            c->partial_impossible, c->partial_impossible == 1 ? "" : "es", c->partial_reported,
            c->partial_spans, c->partial_counted);
  if (c->collector_message[0] != '\0')
    fprintf(f, ", the collector's message: \"%s\"", c->collector_message);
  if (c->replaced > 0) /* as the files' summary says it: a peer's bytes were invalid */
    fprintf(f, ", %" PRIu64 " invalid UTF-8 sequences in the trace's strings written as U+FFFD",
            c->replaced);
}
