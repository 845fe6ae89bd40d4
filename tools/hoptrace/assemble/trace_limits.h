/* What a limit (read/limits.h) did to a trace, said on its root. */
#ifndef HT_TOOL_TRACE_LIMITS_H
#define HT_TOOL_TRACE_LIMITS_H

#include "assemble/model.h"
#include "assemble/span_store.h"

/* Tags its first root, once resolved: hoptrace.limit.dropped_spans (the
 * span events dropped past --max-trace-spans), .strings_cut (its strings
 * cut to --max-string), and
 * hoptrace.limit.written_early when too many open traces had it written
 * incomplete before its grace. 0, or -1 out of memory. */
int trace_limit_tags(span_mem *mem, trace *t);

#endif
