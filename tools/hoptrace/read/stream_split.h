/* Splits the stream files of CTF trace directories into groups of about
 * equal size, each group a directory of its own holding, per trace, a
 * symbolic link to the trace's metadata, its index directory and the
 * group's stream files: a babeltrace2 graph over a group reads only those
 * streams, so groups decode in parallel (bt_parallel.c). LTTng writes a
 * stream file per CPU and buffer owner; a trace with one stream file is
 * not split. */
#ifndef HT_TOOL_STREAM_SPLIT_H
#define HT_TOOL_STREAM_SPLIT_H

#include <stddef.h>

#define STREAM_SPLIT_MAX_GROUPS 8

typedef struct stream_split {
  size_t n_groups;
  char *roots[STREAM_SPLIT_MAX_GROUPS]; /* one temporary directory each */
  /* each root open and flock'ed while this process (or a decoder it
   * forked) lives: a later run removes only unlocked roots of dead pids */
  int locks[STREAM_SPLIT_MAX_GROUPS];
  size_t n_locks;
} stream_split;

/* Groups the non-empty stream files of dirs[0..n_dirs) into at most
 * max_groups groups under temporary directories in $TMPDIR (or /tmp),
 * named hoptrace-split.PID.XXXXXX. First removes such directories left
 * by runs that died (SIGKILL, a crash): only this user's, only when PID
 * is gone and no process holds the directory's lock.
 * 0 with split->n_groups >= 2; 1 when there is nothing to split (fewer
 * than two stream files, or max_groups < 2): nothing created; -1 with a
 * message in err (nothing left behind). */
int stream_split_make(char *const *dirs, size_t n_dirs, size_t max_groups,
                      stream_split *split, char *err, size_t err_len);

/* Removes the group directories and links (never the trace's files). */
void stream_split_remove(stream_split *split);

#endif
