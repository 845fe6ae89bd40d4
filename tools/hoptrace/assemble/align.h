/* Clock alignment between the spans and the clock model (clock_sync.h):
 * takes each cross-host RPC of an emitted trace as a constraint on the
 * two hosts' clock offset, and moves every span of a trace onto the
 * reference host's clock, recording on each span what it was moved by
 * and how sure that is. Never moves a span without saying so. */
#ifndef HT_TOOL_ALIGN_H
#define HT_TOOL_ALIGN_H

#include <stdint.h>

#include "clock/clock_sync.h"
#include "assemble/model.h"

typedef struct align_state align_state;

/* reference: the host whose clock the outputs use (NULL: chosen by the
 * fit, see clock_sync_solve). NULL when out of memory. */
align_state *align_new(const char *reference);
void align_free(align_state *a);

/* Adds every RPC of t whose client and server spans are on different
 * hosts and carry cs, sr, ss and cr. The trace must be emitted (parents
 * resolved) and not yet moved by align_apply. Returns the RPCs added. */
uint64_t align_collect(align_state *a, const trace *t);

/* Fits the clocks from the RPCs collected so far. 0, or -1 when the
 * reference host is unknown (message in err). */
int align_solve(align_state *a, char *err, size_t err_len);

/* Moves t's spans (start, end, annotations) onto the reference clock
 * with the last fit; sets each span's clock_shift_ns / clock_bound_ns. */
void align_apply(align_state *a, trace *t);

const clock_sync *align_clock(const align_state *a);
uint64_t align_rpcs(const align_state *a);

#endif
