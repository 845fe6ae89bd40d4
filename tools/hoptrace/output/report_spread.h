/* When within the report's window the traces were recorded: each trace
 * counted, with its 1/p weight, at its first span's start, in at most
 * SPREAD_BINS bins of equal width that double (pairs merged) whenever a
 * start falls outside them, so memory stays fixed however long the run.
 * Printed as SPREAD_SLICES equal slices of the window (one when it has
 * no length), inside it: a bin counts whole in the slice holding its
 * middle, so a slice's edges are good to one bin (the window / 512 at
 * most), and every trace is in exactly one slice. */
#ifndef HT_TOOL_REPORT_SPREAD_H
#define HT_TOOL_REPORT_SPREAD_H

#include <stdint.h>

#include "output/obuf.h"

#define SPREAD_BINS 1024
#define SPREAD_SLICES 10

typedef struct report_spread report_spread;

report_spread *report_spread_new(void);
void report_spread_free(report_spread *s);
/* A trace starting at start_ns, weighted w (1/p; 0: p unknown). */
void report_spread_add(report_spread *s, int64_t start_ns, double w);
/* The slices of [first_ns, last_ns] (the window, which holds every start
 * added): start offset, traces, share, estimated issued and recorded /
 * estimated (the sampled fraction: a change shows sampling changed). */
void report_spread_print(const report_spread *s, obuf *out, int64_t first_ns, int64_t last_ns);

#endif
