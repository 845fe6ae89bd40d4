/* Finding the CTF traces below an input directory (trace_dirs.c). */
#ifndef HT_TOOL_TRACE_DIRS_H
#define HT_TOOL_TRACE_DIRS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* The bounds of a walk: a trace deeper than this below the input is not
 * found (LTTng's deepest layout, a relay's host/session/ust/uid/UID/BITS,
 * is 6 levels; a directory of hosts' sessions 7). */
#define TRACE_DIRS_MAX_DEPTH 8
#define TRACE_DIRS_MAX_VISITED 65536

enum {
  TRACE_DIRS_NO_MEMORY = -1,
  TRACE_DIRS_TOO_MANY_TRACES = -2,
  TRACE_DIRS_TOO_MANY_DIRS = -3,
  TRACE_DIRS_STOPPED = -4,
};

/* Appends to *dirs every directory below `path` (or path itself) that
 * holds a CTF `metadata` file and some stream data; depth is 0 at the
 * input. Symbolic links below path are not followed (path itself may be
 * one). 0, or a TRACE_DIRS_* error. */
int bt_find_trace_dirs(const char *path, char ***dirs, size_t *n, int depth);

/* From now on every walk ends (TRACE_DIRS_STOPPED) once *flag is
 * non-zero: the reader's interruption flag. */
void bt_trace_dirs_stop_on(atomic_int *flag);

/* A directory named as LTTng names a snapshot's output:
 * NAME-YYYYMMDD-HHMMSS-N (`lttng snapshot record`, a trigger's
 * snapshot-session action). */
bool bt_is_snapshot_name(const char *name);

/* Flight-recorder snapshots: some input holds a capture.json (what
 * `hoptrace record --flight` writes beside its snapshots) or a trace
 * below it lies in a directory named as a snapshot, or
 * bt_inputs_snapshots is set (--snapshots: snapshots copied under other
 * names, which would otherwise be read as many times as they overlap).
 * Their traces overlap (each snapshot is the whole ring at its moment)
 * and only the captured ones are exported by default. Live inputs never
 * are. */
extern bool bt_inputs_snapshots;
bool bt_inputs_are_flight(const char *const *inputs, size_t n_inputs);

/* What a TRACE_DIRS_* error means, for a message. */
const char *bt_trace_dirs_error(int rc);

#endif
