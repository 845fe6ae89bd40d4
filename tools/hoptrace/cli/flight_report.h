/* What the flight recorder did, kept while it runs and written at the
 * end: DIR/capture.json and a one-paragraph summary on stderr. */
#ifndef HT_TOOL_FLIGHT_REPORT_H
#define HT_TOOL_FLIGHT_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/flight_policy.h"
#include "output/latency_hist.h"

/* A host's recorder may run for weeks at 2 snapshots a second: the list
 * keeps the newest this many, the latencies a bounded histogram. */
#define FL_LIST_MAX 4096

/* The traces a snapshot was taken for, as the notifications said: the
 * first few, the rest counted. */
#define FL_SNAP_TRACES 8
typedef struct fl_trace {
  uint64_t hi, lo;
  unsigned why; /* HT_CAPTURE_*; 0 unknown */
} fl_trace;

typedef struct fl_snap {
  char name[96];      /* its directory under DIR (the relay's: its prefix) */
  int64_t at_ns;      /* wall clock when it started, ns since the epoch */
  int64_t written_ns; /* wall clock when lttng had written it */
  int64_t start_mono_ns; /* monotonic clock when the rate limit let it
                            start: the clock the limit keeps */
  uint64_t triggers;  /* triggers it captured (the first and coalesced) */
  double latency_ms;  /* first trigger's notification -> written */
  fl_trace traces[FL_SNAP_TRACES];
  unsigned ntraces;
  uint64_t more_traces; /* triggers past FL_SNAP_TRACES, or without a trace id */
} fl_snap;

typedef struct fl_log {
  fl_snap *snaps;            /* a ring of the newest FL_LIST_MAX */
  size_t n, cap, first;      /* listed, allocated, the oldest's slot */
  uint64_t omitted;          /* written, no longer listed (the oldest) */
  latency_hist latency;      /* every written snapshot's, ns */
  uint64_t daemon_dropped;   /* NOTIFICATIONS_DROPPED statuses seen */
  long long tracer_discarded; /* the trigger's tracer-side discards; -1 unknown */
  int channel_lost;          /* the notification channel closed early */
  char last_failure[256];    /* lttng's text for the last failed snapshot */
  uint64_t ring_bytes;       /* per CPU, as set up */
  uint64_t names_ring_bytes; /* the names channel's, per CPU */
  uint64_t snapshot_max;     /* bytes a snapshot at most; 0: the whole ring */
  uint64_t memory_bytes;     /* both rings x CPUs (per traced user ID) */
  double seconds;            /* how long the agent ran */
} fl_log;

/* Adds a written snapshot (the oldest listed one leaves the list when it
 * is full); -1 when out of memory (then not listed). */
int fl_log_add(fl_log *l, const fl_snap *s);

void fl_log_free(fl_log *l);

/* Writes path (capture.json). 0, or -1 (errno set). */
int fl_report_write(const char *path, const fl_policy *p, const fl_log *l);

/* The one-paragraph summary. */
void fl_report_summary(FILE *f, const fl_policy *p, const fl_log *l, const char *where);

#endif
