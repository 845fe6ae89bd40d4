/* Overlapping flight-recorder snapshots: LTTng's snapshots of one
 * session each hold the whole ring at their moment, so two of them share
 * every packet written between the older one's oldest packet and its own
 * moment. Read side by side they give those events twice, at the same
 * time and with the same content. event_dedupe lets each through once and
 * counts the others. */
#ifndef HT_TOOL_DEDUPE_H
#define HT_TOOL_DEDUPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/event.h"

/* Events of one time remembered: past this many at one time (a corrupt
 * clock stamping everything alike), later ones at that time pass through. */
#define DEDUPE_MAX_AT_ONCE 4096

typedef struct event_dedupe {
  int64_t ts_ns;   /* the time of the events remembered */
  uint64_t *seen;  /* their content hashes */
  size_t n, cap;
  uint64_t duplicates; /* events dropped as a copy of one already passed */
} event_dedupe;

/* true: ev is a copy of an event already passed (same time, host,
 * process, ids and content); drop it. Events must come in time order
 * (the merged stream). Out of memory: ev passes (never lost). */
bool event_dedupe_is_copy(event_dedupe *d, const hop_event *ev);
void event_dedupe_free(event_dedupe *d);
/* The content hash the comparison uses (every field, the time included;
 * a capture notice's origin left out). */
uint64_t event_dedupe_hash(const hop_event *e);

#endif
