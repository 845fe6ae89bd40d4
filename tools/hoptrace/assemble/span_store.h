/* Span and trace memory for the assembler. Everything a trace holds comes
 * from its own chunk list and goes back to a pool when it is freed: no
 * malloc per span, string or annotation in the steady state. */
#ifndef HT_TOOL_SPAN_STORE_H
#define HT_TOOL_SPAN_STORE_H

#include "assemble/model.h"
#include "read/event.h"

#include "assemble/chunk_pool.h"
#include "assemble/name_table.h"

/* The assembler's memory: trace chunks, and the names spans share. */
typedef struct span_mem {
  chunk_pool *chunks;
  name_table *names;
} span_mem;

span_mem *span_mem_new(void);
void span_mem_free(span_mem *mem);

trace *trace_new(span_mem *mem, uint64_t hi, uint64_t lo);
void trace_free(span_mem *mem, trace *t);
/* A new span in t, NULL when out of memory. */
span *trace_add_span(span_mem *mem, trace *t, uint64_t id, uint64_t parent_id);
/* Memory from the trace's chunks (16-byte aligned), NULL out of memory. */
void *trace_alloc(span_mem *mem, trace *t, size_t size);
/* A string kept as long as t (shared when the name table takes it),
 * NULL out of memory. */
const char *trace_str(span_mem *mem, trace *t, const char *s);
/* Adds one of the assembler's own tags to s (the key shared, the value
 * copied; both whole, never cut to --max-string). 0, or -1. */
int span_add_tag(span_mem *mem, trace *t, span *s, const char *key, bool is_int,
                 int64_t int_value, const char *str_value);
/* Applies one event's content to its span. 0, or -1 out of memory. */
int span_apply_event(span_mem *mem, trace *t, span *s, const hop_event *ev);

#endif
