/* `export --follow DIR`: flight-recorder snapshots read as they are
 * written. DIR (record --flight's -o DIR, a relay's output) is looked at
 * every FOLLOW_POLL_MS for new snapshot directories (NAME-YYYYMMDD-
 * HHMMSS-N); each is read once LTTng has finished writing it, each event
 * once across overlapping snapshots, and each trace is written once no
 * snapshot has added to it for the settle time. */
#ifndef HT_TOOL_FLIGHT_FOLLOW_H
#define HT_TOOL_FLIGHT_FOLLOW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "assemble/assemble.h"
#include "read/bt_source.h"

#define FOLLOW_POLL_MS 200
/* a snapshot nobody marks as written: read once its files have not
 * changed for this long */
#define FOLLOW_STABLE_MS 1000
/* the file record --flight leaves in a snapshot's directory once
 * LTTng's snapshot command has returned: the snapshot is whole */
#define FOLLOW_WRITTEN_MARK ".hoptrace-written"

typedef struct follow_options {
  int64_t settle_ns; /* a trace is written this long after the last
                        snapshot that added to it (--grace) */
  int64_t quiet_ns;  /* no new snapshot for this long ends the run
                        (--timeout); < 0: never */
  bool all;          /* --all: uncaptured traces are written too */
} follow_options;

typedef struct follow_stats {
  uint64_t snapshots;    /* read */
  uint64_t copies;       /* events an earlier snapshot held, skipped */
  uint64_t late;         /* events of traces already written, skipped */
  uint64_t unsettled;    /* traces written before their settle time */
  uint64_t remembered_full; /* events not remembered (the bound) */
  uint64_t held_aged, held_full; /* uncaptured traces dropped: after
                                    HOLD_SNAPSHOTS, past the bound */
} follow_stats;

/* Follows inputs (directories) until *stop, the recorder's end (a
 * capture.json in an input: its last snapshot is written) or quiet_ns
 * without a new snapshot. Events go to cb (as bt_source_read's);
 * settled traces are emitted from a; uncaptured ones held, bounded, for
 * a later capture (flight_follow.c; with all: written when settled). 0, or -1 with a message in err. */
int flight_follow_read(const char *const *inputs, size_t n_inputs, assembler *a,
                       const follow_options *o, const bt_source_callbacks *cb, void *user,
                       bt_source_stats *stats, follow_stats *fs, atomic_int *stop, char *err,
                       size_t err_len);

/* The summary line of a follow (stderr). */
void follow_print(const follow_stats *fs, FILE *f);

#endif
