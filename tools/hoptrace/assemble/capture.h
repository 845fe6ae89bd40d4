/* A trace's capture events (flight recorder): who fired and why, which
 * processes the notice reached; settled on the root at emission. */
#ifndef HT_TOOL_CAPTURE_H
#define HT_TOOL_CAPTURE_H

#include "assemble/assemble.h"
#include "assemble/model.h"
#include "assemble/span_store.h"
#include "read/event.h"

/* Adds a capture event to t (the trace's, never a span's), counting its
 * trigger or notice in stats. 0, or -1 out of memory. */
int capture_add(span_mem *mem, assembler_stats *stats, trace *t, const hop_event *ev);

/* t resolved, with a capture: counts the processes that hold none of its
 * spans and the answered calls without a server span, and tags the root
 * with why it was captured. 0, or -1 out of memory. */
int capture_settle(span_mem *mem, trace *t);

#endif
