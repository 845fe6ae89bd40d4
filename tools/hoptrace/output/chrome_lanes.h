/* Tracks ("lanes") of the Chrome export. Perfetto and chrome://tracing
 * stack a thread's complete events by time and misdraw those that partly
 * overlap (a thread's concurrent requests, replica writes sent together);
 * one inside another is drawn as its child. So a span goes to the first
 * lane of its thread where it follows what is there or lies inside one
 * of its own ancestors; lane 0 is the thread itself. */
#ifndef HT_TOOL_CHROME_LANES_H
#define HT_TOOL_CHROME_LANES_H

#include <stdint.h>

#include "assemble/idmap.h"
#include "assemble/model.h"

#define CHROME_LANES_MAX 1024 /* per thread; lane tids stay below 2^32 */

typedef struct chrome_lanes {
  idmap threads;   /* (pid, tid) -> its lanes */
  uint64_t trace;  /* the trace being placed: chrome_lanes_next_trace */
  uint64_t forced; /* spans put in a lane they partly overlap (all full) */
} chrome_lanes;

/* Before the spans of each trace (ancestry is within one trace). */
static inline void chrome_lanes_next_trace(chrome_lanes *l) { l->trace++; }

/* The lane of span s, drawn over [start, end] (start <= end) on thread
 * (pid, tid), or -1 when out of memory. Best fed by start time: a span
 * that starts before a lane's latest one goes to another lane. */
int chrome_lane_place(chrome_lanes *l, int64_t pid, int64_t tid, const span *s,
                      int64_t start, int64_t end);

/* The Chrome tid of a thread's lane: the thread's own for lane 0, else
 * above every Linux tid (< 2^22) and below 2^32 (Perfetto reads tids as
 * unsigned 32-bit). */
int64_t chrome_lane_tid(int64_t tid, int lane);

void chrome_lanes_free(chrome_lanes *l);

#endif
