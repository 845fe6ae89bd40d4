/* Running helper programs (lttng, lttng-sessiond, the recorded command). */
#ifndef HT_TOOL_SPAWN_H
#define HT_TOOL_SPAWN_H

#include <stdio.h>
#include <sys/types.h>

/* How long an lttng command may take (stop and destroy flush buffers). */
#define SPAWN_HELPER_MS 120000

/* spawn_bounded's answer when the program did not end in time. */
#define SPAWN_OVERRAN (-2)

/* Runs argv[0] (PATH lookup) and waits at most timeout_ms (then kills
 * it). Output is captured and, with report, printed on stderr when the
 * program fails or overruns. Returns its exit status, SPAWN_OVERRAN, or
 * -1. */
int spawn_bounded(char *const argv[], int timeout_ms, int report);

/* spawn_bounded(argv, SPAWN_HELPER_MS, 1). */
int spawn_quiet(char *const argv[]);

/* Starts a daemon in the foreground as our child, in a session of its
 * own, and waits (at most timeout_ms) for its readiness signal SIGUSR1
 * (lttng-sessiond --sig-parent). Returns its pid, or -1 (said why; a
 * daemon that never became ready is stopped). Stop it with spawn_stop. */
pid_t spawn_daemon(char *const argv[], int timeout_ms);

/* SIGTERM to our child pid, at most grace_ms to exit, then SIGKILL to it
 * and its process group; reaped either way. */
void spawn_stop(pid_t pid, int grace_ms);

/* Starts argv (inheriting stdio); returns the pid or -1. */
pid_t spawn_child(char *const argv[]);

/* Waits for pid; returns its exit status (128+signal when killed). */
int spawn_wait(pid_t pid);

/* Starts argv as our child in a session of its own, stdin /dev/null,
 * stdout and stderr into log (NULL: /dev/null). Returns the pid or -1. */
pid_t spawn_logged(char *const argv[], FILE *log);

/* Prints what a helper wrote into log (indented) on stderr. */
void spawn_print_log(FILE *log);

#endif
