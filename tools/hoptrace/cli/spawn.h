/* Running helper programs (lttng, lttng-sessiond, the recorded command). */
#ifndef HT_TOOL_SPAWN_H
#define HT_TOOL_SPAWN_H

#include <sys/types.h>

/* Runs argv[0] (PATH lookup) and waits. Output is captured and printed on
 * stderr only when the program fails. Returns its exit status, or -1. */
int spawn_quiet(char *const argv[]);

/* Starts argv (inheriting stdio); returns the pid or -1. */
pid_t spawn_child(char *const argv[]);

/* Waits for pid; returns its exit status (128+signal when killed). */
int spawn_wait(pid_t pid);

/* 1 when a process with this exact name runs as the current user. */
int process_running(const char *name);

/* pid of the newest process with this name of the current user, or -1. */
pid_t process_find(const char *name);

#endif
