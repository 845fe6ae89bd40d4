/* `hoptrace report`'s slowest traces: each with its critical path (the
 * spans report_critical.h walks, the last to finish first), when it
 * started and its largest request/reply gaps (with the clock correction
 * between the two hosts); and, when they all ran at one moment, a line
 * that says so: slow together is the machine, not a hop. */
#ifndef HT_TOOL_REPORT_SLOWEST_H
#define HT_TOOL_REPORT_SLOWEST_H

#include "assemble/model.h"
#include "output/obuf.h"

#define REPORT_SLOWEST 5

typedef struct report_slowest report_slowest;

report_slowest *report_slowest_new(void);
void report_slowest_free(report_slowest *o);
/* Keeps t when among the slowest; -1 when its path could not be walked
 * (out of memory). */
int report_slowest_add(report_slowest *o, const trace *t);
void report_slowest_print(report_slowest *o, obuf *out);

#endif
