/* The LTTng daemons a recording uses: its own session daemon in a
 * private run directory (only the processes it starts can register with
 * it), the machine's for an explicit set of processes, a relay of its
 * own when a live URL names this machine and nothing listens there.
 * Daemons it starts are its children, known by the pid it started,
 * watched while the command runs, and stopped by that pid only. */
#ifndef HT_TOOL_RECORD_WORLD_H
#define HT_TOOL_RECORD_WORLD_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* One daemon the recording depends on. pid > 0 and ours: started here
 * (our child); pid 0: someone else's, reached through its socket. */
typedef struct rec_daemon {
  const char *name;   /* "lttng-sessiond", "lttng-relayd" */
  pid_t pid;
  int ours;
  int lost;           /* vanished while the recording ran */
  char how[96];       /* how it vanished ("killed by SIGKILL", "exited 1", ...) */
  struct timespec lost_at; /* wall clock when noticed */
  struct timespec asked_at; /* another's: when last asked (monotonic) */
} rec_daemon;

/* Enters a private LTTng world for this process and its children: a
 * fresh LTTNG_HOME (mkdtemp under TMPDIR, written to home, cap bytes)
 * and, as root, a mount namespace of its own with empty tmpfs on
 * /var/run/lttng and /dev/shm (root's daemon and apps meet there). 0, or
 * -1 with a reason printed. */
int world_private_enter(char *home, size_t cap);

/* Removes the private LTTNG_HOME (what the daemons left in it). */
void world_private_leave(const char *home);

/* Marks d lost, how (wall clock now). */
void world_daemon_mark_lost(rec_daemon *d, const char *how);

/* Starts lttng-sessiond as our child (ready when it says so, then asked
 * `lttng list`, answered within probe_ms). 0, -1 (said why), or 1: it
 * did not answer in time (d kept: the caller says so and stops it). */
int world_sessiond_start(rec_daemon *d, int private_world, int probe_ms);

/* The machine's daemon when one answers (within probe_ms), else one of
 * ours (a daemon that another recording started at the same moment is
 * used once it answers). 0, -1 (said why), or 1: a daemon took the
 * question and did not answer in time (stopped, deadlocked; d says
 * whose). probe_ms 0: 10 s. */
int world_sessiond_shared(rec_daemon *d, int probe_ms);

/* For a live URL naming this machine (net://127.x|localhost|[::1]
 * [:CTRL[:DATA]], default 5342/5343, live port DATA+1): when nothing
 * listens on its control port, starts lttng-relayd there (output
 * under out_dir) as our child and waits until it listens. A relay that
 * another process put there first is used, not ours. 0 or -1. */
int world_relay_ensure(rec_daemon *d, const char *url, const char *out_dir);

/* 1 (and d->lost, d->how, d->lost_at set) when a daemon we depend on
 * vanished: ours when waitpid says it died or was stopped; with
 * session_name, when `lttng list NAME` (asked once a second) fails or
 * is not answered within answer_ms (a deadlocked daemon is alive, not
 * stopped). answer_ms 0 (no --daemon-timeout, no --flight): ours is
 * not asked, another's has 3 s, as before the bounds. */
int world_daemon_lost(rec_daemon *d, const char *session_name, int answer_ms);

/* Stops a daemon we started (SIGTERM, its process group after a grace)
 * and says so; nothing for another's. */
void world_daemon_stop(rec_daemon *d);

/* "lttng-sessiond (pid 123, started for this recording) was killed by
 * SIGKILL at 12:00:01.250, 4.2 s into the recording" into buf. */
void world_daemon_describe(const rec_daemon *d, const struct timespec *started,
                           char *buf, size_t cap);

#endif
