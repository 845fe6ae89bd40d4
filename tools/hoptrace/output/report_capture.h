/* The report's capture section (flight recorder): the triggers by reason,
 * the captured traces by the process whose trigger fired, how many are
 * complete and, for the partial ones, what is missing and where; the
 * counters of the capture.json files beside the snapshots. Shown only
 * when the input holds captures (or such a file). */
#ifndef HT_TOOL_REPORT_CAPTURE_H
#define HT_TOOL_REPORT_CAPTURE_H

#include "assemble/assemble.h"
#include "output/obuf.h"
#include "read/bt_source.h"
#include "read/capture_json.h"

/* Processes listed (the rest counted as other), partial traces listed. */
#define REPORT_CAPTURE_PROCS 32
#define REPORT_CAPTURE_PARTIAL 10

typedef struct report_capture report_capture;

report_capture *report_capture_new(void);
void report_capture_free(report_capture *rc);
/* Every trace written; only the captured ones count. */
void report_capture_add(report_capture *rc, const trace *t);
/* Nothing when there is no capture and no capture.json. */
void report_capture_print(const report_capture *rc, obuf *out, const assembler_stats *st,
                          const bt_source_stats *src, const capture_files *files);

#endif
