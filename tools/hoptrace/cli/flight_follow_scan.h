/* Finding the snapshot directories below followed inputs, and when each
 * is whole (flight_follow.h). */
#ifndef HT_TOOL_FLIGHT_FOLLOW_SCAN_H
#define HT_TOOL_FLIGHT_FOLLOW_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "assemble/idmap.h"

typedef struct follow_snap {
  char *dir;      /* the snapshot's directory (NAME-YYYYMMDD-HHMMSS-N) */
  size_t parent;  /* its directory's length in dir: the session's */
  uint64_t n;     /* LTTng's snapshot number, N */
  char **traces;  /* the CTF traces below it, as last found */
  size_t n_traces;
  uint64_t bytes, files; /* their files, as last looked at */
  int64_t changed_ns;    /* monotonic time its files last changed */
  bool whole, read;
} follow_snap;

typedef struct follow_scan {
  follow_snap *snaps;
  size_t n, cap;
  idmap by_dir; /* a snapshot by its directory (flight_follow_scan.c) */
  idmap newest; /* a session's newest snapshot (flight_follow_scan.c) */
  bool not_snapshot; /* a trace below the inputs in no snapshot directory */
} follow_scan;

/* Looks again below inputs at monotonic time now_ns: new snapshots
 * added, the whole ones marked (follow_snap.whole; see the README's
 * rule). 0, or a TRACE_DIRS_* error. */
int follow_scan_run(follow_scan *s, const char *const *inputs, size_t n_inputs, int64_t now_ns);

/* Every input holds a capture.json: each one's recorder has ended (one
 * host's DIR of several that ended says nothing of the others'). */
bool follow_scan_ended(const char *const *inputs, size_t n_inputs);

void follow_scan_free(follow_scan *s);

#endif
