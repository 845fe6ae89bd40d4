/* `hoptrace report`'s "Degraded writes per primary": a primary's server
 * span that carries the integer key-values sim.replicas (the replicas it
 * planned to write) and sim.replicas_acked (those that acknowledged) is
 * a write; it is degraded when acknowledged by fewer than planned. Per
 * primary service: the writes and the degraded ones, sampled and
 * estimated issued by 1/p (report_groups.h), and how many of each "N of
 * M". Bounded: GROUPS_MAX primaries (the rest in one "(other)" row), 8
 * "N of M" pairs a row (the rest summed as "other"). */
#ifndef HT_TOOL_REPORT_DEGRADED_H
#define HT_TOOL_REPORT_DEGRADED_H

#include "assemble/model.h"
#include "output/obuf.h"

#define DEGRADED_ACKED_KEY "sim.replicas_acked"
#define DEGRADED_PLANNED_KEY "sim.replicas"

typedef struct report_degraded report_degraded;

report_degraded *report_degraded_new(void);
void report_degraded_free(report_degraded *d);
/* Counts t's writes, each weighted w (1/p; 0: p unknown). -1: a primary
 * could not be kept (out of memory). */
int report_degraded_add(report_degraded *d, const trace *t, double w);
/* The section; one line when no span carried both keys. */
void report_degraded_print(const report_degraded *d, obuf *out);

#endif
