/* The run's summary on stderr, once the output is closed: events, traces
 * and what made them incomplete, drops past the limits, captures, the
 * snapshots followed, each host's health and the clocks' alignment. */
#ifndef HT_TOOL_SUMMARY_H
#define HT_TOOL_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>

#include "assemble/align.h"
#include "assemble/assemble.h"
#include "assemble/host_health.h"
#include "cli/flight_follow.h"
#include "read/bt_source.h"

typedef struct run_summary {
  const bt_source_stats *src;
  const assembler_stats *st;
  unsigned long long replaced;     /* invalid UTF-8 written as U+FFFD */
  bool flight, follow;             /* flight snapshots; followed */
  uint64_t not_captured, not_kept; /* traces not written without --all */
  const follow_stats *followed;    /* snapshot directories followed, or NULL */
  const host_health *hosts;
  int64_t stall_ns;         /* a host this quiet before the end is stalled */
  const align_state *align; /* NULL: clocks not aligned */
  int n_hosts;
} run_summary;

void summary_print(const run_summary *s);

#endif
