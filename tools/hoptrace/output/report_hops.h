/* `hoptrace report`'s per-hop blocks (client span -> server span, its
 * phases) and fan-out waits, grouped by operation (a trace's root span
 * name), the operation with the most end-to-end time first; in each, its
 * hops by contribution: a hop's round trip (a fan-out's wait) summed over
 * the operation's calls, over the operation's end-to-end time summed,
 * each trace weighted by 1/p (of unknown p: once). Errors and timeouts
 * only where there are any. The same order in the text report and its
 * JSON. Bounded: HOPS_OPS operations (the rest in "(other)"), HOPS_ROWS
 * rows (the rest not counted, said as samples not kept); a latency_hist
 * per row and phase. */
#ifndef HT_TOOL_REPORT_HOPS_H
#define HT_TOOL_REPORT_HOPS_H

#include <stdint.h>

#include "assemble/model.h"
#include "output/obuf.h"

#define HOPS_OPS 256
#define HOPS_ROWS 4096

typedef struct report_hops report_hops;

report_hops *report_hops_new(void);
void report_hops_free(report_hops *h);
/* Counts t's hops and fan-outs. */
void report_hops_add(report_hops *h, const trace *t);
/* Samples and rows not kept (out of memory, HOPS_ROWS). */
uint64_t report_hops_dropped(const report_hops *h);

/* The "Per hop" and "Fan-out" sections, then "Errors and timeouts per
 * hop" (only the hops that had any; one line when none had). */
void report_hops_print(report_hops *h, obuf *out);
/* "hops": [...], "fanout": [...] members of the report's JSON object
 * (each preceded by a comma). */
void report_hops_json(report_hops *h, obuf *out);

#endif
