/* Span and trace memory for the assembler. */
#ifndef HT_TOOL_SPAN_STORE_H
#define HT_TOOL_SPAN_STORE_H

#include "event.h"
#include "model.h"

trace *trace_new(uint64_t hi, uint64_t lo);
void trace_free(trace *t);
/* A new span in t, NULL when out of memory. */
span *trace_add_span(trace *t, uint64_t id, uint64_t parent_id);
/* Applies one event's content to its span. 0, or -1 out of memory. */
int span_apply_event(span *s, const hop_event *ev);
int span_add_annotation(span *s, int64_t ts_ns, const char *value);
int span_add_tag(span *s, const char *key, bool is_int, int64_t int_value,
                 const char *str_value);

#endif
