/* Overlapping flight-recorder snapshots: LTTng's snapshots of one
 * session each hold the whole ring at their moment, so two of them share
 * every packet written between the older one's oldest packet and its own
 * moment. Read side by side they give those events twice, at the same
 * time and with the same content. event_dedupe lets each through once and
 * counts the others.
 *
 * A copy need not come next to its original: the merge accepts a stream
 * whose time goes back (bt_merge.h), and then a snapshot's copy comes
 * after whatever the other snapshot held later. So the events passed are
 * remembered for the whole read, not only those of the last time, up to
 * --max-open-spans of them (16 bytes each). Past it, the oldest half (by
 * time, and every one older than the current time) is forgotten; a later
 * event no older than one forgotten may be a copy not recognised: it
 * passes, counted in ht_drops.dedupe_unsure (the run is then not whole).
 * While the merged time never goes back, nothing is ever unsure. */
#ifndef HT_TOOL_DEDUPE_H
#define HT_TOOL_DEDUPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/event.h"

typedef struct dedupe_slot {
  int64_t ts;
  uint64_t hash; /* 0: an empty slot */
} dedupe_slot;

typedef struct event_dedupe {
  dedupe_slot *slots; /* open addressing, a power of two of them (or none) */
  size_t cap, n;
  bool forgot;         /* some events were forgotten (the limit) */
  int64_t forgot_upto; /* the latest time of an event forgotten */
  uint64_t duplicates; /* events dropped as a copy of one already passed */
  uint64_t unsure;     /* events passed that may copy a forgotten one */
} event_dedupe;

/* true: ev is a copy of an event already passed (same time, host,
 * process, ids and content); drop it. Events may come in any order. Out
 * of memory: the oldest are forgotten as past the limit (never lost). */
bool event_dedupe_is_copy(event_dedupe *d, const hop_event *ev);
void event_dedupe_free(event_dedupe *d);
/* The content hash the comparison uses (every field, the time included;
 * a capture notice's origin left out). */
uint64_t event_dedupe_hash(const hop_event *e);

#endif
