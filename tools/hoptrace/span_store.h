/* Span and trace memory for the assembler. Everything a trace holds comes
 * from its own chunk list and goes back to a pool when it is freed: no
 * malloc per span, string or annotation in the steady state. */
#ifndef HT_TOOL_SPAN_STORE_H
#define HT_TOOL_SPAN_STORE_H

#include "event.h"
#include "model.h"

typedef struct chunk_pool chunk_pool;

chunk_pool *chunk_pool_new(void);
void chunk_pool_free(chunk_pool *pool);

trace *trace_new(chunk_pool *pool, uint64_t hi, uint64_t lo);
void trace_free(chunk_pool *pool, trace *t);
/* A new span in t, NULL when out of memory. */
span *trace_add_span(chunk_pool *pool, trace *t, uint64_t id, uint64_t parent_id);
/* Memory from the trace's chunks (16-byte aligned), NULL out of memory. */
void *trace_alloc(chunk_pool *pool, trace *t, size_t size);
/* Applies one event's content to its span. 0, or -1 out of memory. */
int span_apply_event(chunk_pool *pool, trace *t, span *s, const hop_event *ev);

#endif
