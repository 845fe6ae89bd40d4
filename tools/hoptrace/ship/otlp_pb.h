/* A batch of spans -> OTLP ExportTraceServiceRequest protobuf bytes
 * (otlp.proto, through protobuf-c), one ResourceSpans per resource of
 * the batch. What each span becomes is otlp_map.h's, the mapping the
 * OTLP JSON file uses. Spans are copied in: the traces may be freed
 * once added. */
#ifndef HT_SHIP_OTLP_PB_H
#define HT_SHIP_OTLP_PB_H

#include <stddef.h>
#include <stdint.h>

#include "assemble/model.h"

typedef struct pb_batch pb_batch;

pb_batch *pb_batch_new(void);
void pb_batch_free(pb_batch *b);
/* 0, or -1 out of memory (the span is not in the batch). */
int pb_batch_add(pb_batch *b, const trace *t, const span *s);
size_t pb_batch_spans(const pb_batch *b);
/* The memory the batch holds: a bound on its encoded size. */
size_t pb_batch_bytes(const pb_batch *b);
/* Invalid UTF-8 sequences of the batch's strings written as U+FFFD. */
uint64_t pb_batch_replaced(const pb_batch *b);
/* The request's bytes (malloc'd, the caller's; NULL when out of
 * memory), and the batch emptied either way. */
uint8_t *pb_batch_take(pb_batch *b, size_t *len);

/* ExportTraceServiceResponse: its partial success. 0, or -1 when the
 * bytes are no such message. */
int pb_response_parse(const uint8_t *data, size_t len, int64_t *rejected, char *message,
                      size_t cap);

#endif
