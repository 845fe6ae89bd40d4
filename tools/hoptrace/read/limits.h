/* The tool's memory limits and what it dropped past them (README
 * "Limits"): whatever the input, each kind of thing the tool holds has a
 * bound, set once by the command line before a run. Past one, the least
 * useful thing is dropped, counted here by reason; the summary and the
 * report print the counts and the run exits non-zero when an output is
 * not whole. One run at a time per process: the values are globals. */
#ifndef HT_TOOL_LIMITS_H
#define HT_TOOL_LIMITS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct tool_limits {
  uint64_t open_traces; /* traces held open at once (--max-open-traces) */
  uint64_t open_spans;  /* spans in the open traces (--max-open-spans);
                           also the events of overlapping snapshots
                           remembered to skip their copies (dedupe.h) */
  uint64_t trace_spans; /* spans of one trace (--max-trace-spans) */
  uint64_t names;       /* desc/peer/process table entries (--max-names) */
  uint64_t name_bytes;  /* their text */
  uint64_t string_bytes; /* one string of an event (--max-string) */
  uint64_t page_bytes;  /* the waterfall page's traces (--max-page-mib) */
} tool_limits;

#define TOOL_LIMITS_DEFAULT                                                    \
  {.open_traces = 65536, .open_spans = 2097152, .trace_spans = 1048576,       \
   .names = 262144, .name_bytes = (uint64_t)64 << 20, .string_bytes = 65536,   \
   .page_bytes = (uint64_t)256 << 20}

typedef struct tool_drops {
  uint64_t early_traces;  /* written before their grace: too many open */
  uint64_t early_incomplete; /* of them, incomplete then (marked) */
  uint64_t trace_spans;   /* span events past a trace's limit, dropped */
  uint64_t names;         /* table entries not kept (full, or an id no
                             span can name) */
  uint64_t strings;       /* strings cut to string_bytes */
  uint64_t page_traces;   /* traces left out of the waterfall page */
  uint64_t page_aggregate; /* bytes of the aggregate critical path left
                             out of the waterfall page (0: kept) */
  uint64_t dedupe_unsure; /* events of overlapping snapshots passed that
                             may copy one forgotten past open_spans
                             remembered (dedupe.h) */
} tool_drops;

extern tool_limits ht_limits;
extern tool_drops ht_drops;

#endif

/* Something was dropped or cut: the output is not whole. */
bool limits_dropped(void);
/* One line per reason that dropped something ("hoptrace: ..."). */
void limits_print_drops(FILE *out);

/* Sets the limit an option names ("max-open-traces", "max-open-spans",
 * "max-trace-spans", "max-names", "max-string", "max-page-mib") from a
 * decimal count
 * >= 1; -1 (message on stderr) when either is wrong. */
int limits_option(const char *name, const char *value);
