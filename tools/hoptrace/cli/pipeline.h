/* INPUT -> babeltrace2 -> assembler -> one output format. */
#ifndef HT_TOOL_PIPELINE_H
#define HT_TOOL_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "output/output.h"

typedef struct pipeline_options {
  const char *const *inputs; /* directories, or live URLs (bt_source_run_many) */
  size_t n_inputs;
  const output_format *format;
  void *format_user; /* handed to the format's open (output_info.user) */
  FILE *out;
  const char *out_name; /* for messages: the user's name of out */
  bool filter_trace; /* only the trace below */
  uint64_t trace_hi, trace_lo;
  bool follow;        /* live: flush each trace as it is emitted; with
                         directories: flight snapshots followed
                         (cli/flight_follow.h) */
  int64_t grace_ns;   /* see assembler_new; following snapshots: the settle time */
  int64_t timeout_ns;
  bool timeout_given; /* --timeout was (following snapshots: without, no end but a signal) */
  bool quiet;         /* no summary on stderr */
  unsigned decoders;  /* processes decoding a trace directory (bt_source.h) */
  /* Every trace: flight-recorder snapshots' uncaptured ones, and a
   * recording's traces recorded and not kept (model.h
   * trace_recorded_not_kept). Without it only captured traces of
   * snapshots, and a recording's kept ones, are written. */
  bool all;
  /* Clock alignment when the input holds several hosts (align.h): a
   * first pass over a file input fits the clocks, the second writes; a
   * live input fits from the first `align_warmup_ns` of events on and
   * refits as it goes. */
  bool align;
  const char *align_reference; /* NULL: the fit's choice */
  int64_t align_warmup_ns;
  /* live: the relay's output directory (lttng-relayd -o), read here when
   * the session ends (cli/live_end.h); NULL: not compared */
  const char *relay_dir;
} pipeline_options;

/* 0 ok, 1 input error (message on stderr), 2 output error, 3 written but
 * not whole (a limit dropped part: read/limits.h), 128 + the
 * signal when SIGINT or SIGTERM interrupted the run (then the output's
 * closing part is not written: a JSON document stays unterminated). */
int pipeline_run(const pipeline_options *opts);
#define PIPELINE_NOT_WHOLE 3
/* SIGINT and SIGTERM from now on only set the flag that ends a run
 * (pipeline_run catches them itself; call this earlier to keep a signal
 * from killing the process between creating the output and the run). */
void pipeline_catch_signals(void);
/* Ends the run as the input's end would (the output whole), from any
 * thread: an output that cannot go on (a collector given up on). */
void pipeline_stop(void);
/* The signal caught (SIGINT, SIGTERM), or 0. */
int pipeline_interrupted(void);

#endif
