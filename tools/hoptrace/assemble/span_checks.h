/* Checks of a trace's spans against each other (span_checks.c). */
#ifndef HT_TOOL_SPAN_CHECKS_H
#define HT_TOOL_SPAN_CHECKS_H

#include <stdbool.h>

#include "assemble/model.h"
#include "assemble/span_store.h"
#include "read/event.h"

/* Cuts every parent cycle of t (parents resolved, children not yet
 * counted): one pass, each span walked through once. */
void span_cut_cycles(trace *t);

/* ev starts its span, and s, the span of that id so far, has started. */
bool span_starts_again(const span *s, const hop_event *ev);

/* s carries a tag named key. */
bool span_has_tag(const span *s, const char *key);

/* s ends before it starts: flags it (END_BEFORE_START_KEY: by how many
 * ns) and counts it in t->backwards. 0, or -1 out of memory. */
int span_flag_backwards(span_mem *mem, trace *t, span *s);

#endif
