/* `hoptrace record [-o DIR [--force]] [--live URL] [--pid PID,...]
 * [--procname NAME]... [--keep-going] -- COMMAND...`
 *
 * Records COMMAND's processes and only those: it starts a session daemon
 * of its own in a private LTTng world (record_world.c: a fresh
 * LTTNG_HOME; as root, a mount namespace with empty /var/run/lttng and
 * /dev/shm), so that only the processes COMMAND starts can register with
 * it, whatever else runs on the machine; stops exactly that daemon at
 * the end. With --pid or --procname it records those processes of the
 * machine's session daemon instead (LTTng's vpid tracker, a procname
 * filter), starting one only when none answers; --shared-sessiond uses
 * that daemon for COMMAND too (an environment that is already private,
 * or a daemon kept up across recordings). For a live URL naming
 * this machine it starts lttng-relayd when nothing listens there. Every
 * lttng command runs with --no-sessiond, within SPAWN_HELPER_MS, and with
 * --daemon-timeout (--flight: 10 s by default) the set-up as a whole
 * and the tear-down within it: a daemon that does not answer in time is
 * named with the step, exit 3 (record_setup.h, flight.h).
 *
 * A session: a user-space channel sized for high event rates (default 8
 * sub-buffers of 2 MiB per CPU, per-user buffers, a packet flushed each
 * second so that a daemon's death loses at most about a second),
 * hoptrace:* enabled without contexts; -o and --live together make two
 * sessions (NAME live, NAME-disk on disk). While COMMAND runs, the
 * daemons it depends on are watched: one that vanishes is reported at
 * once (which, when, what is lost), COMMAND is ended (SIGTERM, SIGKILL a
 * second later; --keep-going lets it run on unrecorded) and record exits
 * 3 after reading back what was recorded. Otherwise it exits with
 * COMMAND's status (2: could not set up; 3: a daemon vanished or the
 * session could not be stopped). A non-empty -o DIR is refused (exit 2)
 * unless --force: LTTng would overwrite its trace.
 *
 * --flight: the host's flight recorder (flight.h). The session is a
 * snapshot session: every event stays in an overwrite ring in memory
 * (--flight-size bytes a CPU, per-user buffers; the names in a ring of
 * their own, --flight-names-size) and nothing is written
 * until a trigger fires (the capture event); then the ring is snapshot
 * into -o DIR (or to the relay at --relay URL), and DIR/capture.json
 * counts what fired and what was written. */
#include "cli/record.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/flight.h"
#include "cli/record_setup.h"
#include "cli/record_world.h"
#include "cli/spawn.h"
#include "read/bt_source.h"

/* A relay daemon we started outlives the session by this much, so that a
 * live viewer still gets the last packets before it goes. */
#define RELAYD_LINGER_S 5
#define COMMAND_GRACE_MS 1000 /* SIGTERM to SIGKILL when a daemon vanished */
#define EXIT_DAEMON_LOST 3

/* SIGINT/SIGTERM go to the recorded command; before it runs they end
 * the recording early, still stopping the daemons started for it. */
static volatile pid_t command_pid;
static volatile sig_atomic_t interrupted;
static void forward_signal(int sig) {
  if (command_pid > 0)
    kill(command_pid, sig);
  else
    interrupted = 128 + sig;
}


static int count_events(void *user, const hop_event *ev) {
  (void)user;
  (void)ev;
  return 0;
}

static void report_trace(const char *dir) {
  bt_source_callbacks cb = {count_events, NULL, NULL};
  bt_source_stats stats;
  char err[512];
  if (bt_source_run(dir, &cb, NULL, &stats, NULL, err, sizeof(err)) != 0) {
    fprintf(stderr, "hoptrace: trace in %s (%s)\n", dir, err);
    return;
  }
  fprintf(stderr,
          "hoptrace: trace in %s: %llu hoptrace events, %llu discarded by LTTng, "
          "%llu packets lost\n",
          dir, (unsigned long long)stats.hop_events,
          (unsigned long long)stats.discarded_events,
          (unsigned long long)stats.discarded_packets);
}

static int output_taken(const char *dir, int force) {
  struct stat st;
  if (stat(dir, &st) != 0)
    return 0; /* created below */
  if (!S_ISDIR(st.st_mode)) {
    fprintf(stderr, "hoptrace: %s exists and is not a directory\n", dir);
    return 1;
  }
  DIR *d = opendir(dir);
  if (d == NULL) {
    fprintf(stderr, "hoptrace: %s: %s\n", dir, strerror(errno));
    return 1;
  }
  int used = 0;
  for (struct dirent *e; !used && (e = readdir(d)) != NULL;)
    used = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  if (used && !force) {
    fprintf(stderr, "hoptrace: %s is not empty (a trace recorded there would be "
                    "overwritten); choose another -o, or --force\n", dir);
    return 1;
  }
  return 0;
}


/* The command is ours: SIGTERM, and SIGKILL after a grace. */
static int end_command(pid_t pid) {
  int st;
  kill(pid, SIGTERM);
  for (int waited = 0; waited < COMMAND_GRACE_MS; waited += 20) {
    if (waitpid(pid, &st, WNOHANG) == pid)
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    usleep(20000);
  }
  kill(pid, SIGKILL);
  return spawn_wait(pid);
}

typedef struct recording {
  record_options o;
  char live_name[96], disk_name[96], dir[PATH_MAX], home[PATH_MAX];
  int live, disk;
  rec_daemon sessiond, relayd;
  struct timespec started;
} recording;

/* Runs the command while watching the daemons. Its status, or
 * EXIT_DAEMON_LOST (said at once) when a daemon vanished. */
static int run_command(recording *r) {
  clock_gettime(CLOCK_REALTIME, &r->started);
  pid_t pid = spawn_child(r->o.command);
  if (pid <= 0)
    return 127;
  command_pid = pid;
  int status = -1, lost = 0;
  const char *watched = r->live ? r->live_name : r->disk_name;
  while (status < 0) {
    int st;
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) {
      status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      break;
    }
    rec_daemon *gone = NULL;
    if (!lost && world_daemon_lost(&r->sessiond, watched, r->o.daemon_ms))
      gone = &r->sessiond;
    else if (!lost && r->relayd.ours && world_daemon_lost(&r->relayd, NULL, 0))
      gone = &r->relayd;
    if (gone != NULL) {
      char what[512];
      lost = 1;
      world_daemon_describe(gone, &r->started, what, sizeof(what));
      fprintf(stderr, "hoptrace: %s: nothing is recorded from then on, and what it held "
                      "in memory (at most about a second) is lost; %s\n",
              what, r->o.keep_going ? "the command runs on, unrecorded (--keep-going)"
                                    : "ending the command");
      if (!r->o.keep_going) {
        command_pid = 0;
        end_command(pid);
        break;
      }
    }
    usleep(50000);
  }
  command_pid = 0;
  return lost ? EXIT_DAEMON_LOST : status;
}

/* Another's daemon that stopped answering may answer again, still
 * holding what this recording set up there: named, with how to remove
 * it (asking now would wait on it). sessions: how many were (or may have
 * been) created, live first; trigger: "" when none was registered. */
static void say_left_behind(const recording *r, int sessions, const char *trigger) {
  const char *names[2] = {r->live ? r->live_name : NULL, r->disk ? r->disk_name : NULL};
  for (int i = 0, n = 0; i < 2; i++)
    if (names[i] != NULL && n++ < sessions)
      fprintf(stderr, "hoptrace: session %s may remain on that daemon: once it answers, "
                      "'lttng destroy %s'\n", names[i], names[i]);
  if (trigger[0] != '\0')
    fprintf(stderr, "hoptrace: the flight recorder's trigger may remain on that daemon: "
                    "once it answers, 'lttng remove-trigger %s'\n", trigger);
}

/* The session daemon did not answer within ms while `step`: said (whose,
 * which step), and it is asked nothing more (ours is killed at the end). */
static void say_stalled(recording *r, const char *phase, const char *step, int ms) {
  const rec_daemon *d = &r->sessiond;
  char who[96];
  if (d->ours)
    snprintf(who, sizeof(who), "(pid %d, started for this recording)", (int)d->pid);
  else
    snprintf(who, sizeof(who), "(the one that answers here, not started by this recording)");
  fprintf(stderr, "hoptrace: %s: lttng-sessiond %s did not answer within %.1f s (at: %s): "
                  "stopped or deadlocked; giving up (--daemon-timeout sets the bound)\n",
          phase, who, ms / 1000.0, step);
  char how[96];
  snprintf(how, sizeof(how), "did not answer during %s", phase);
  world_daemon_mark_lost(&r->sessiond, how);
}

/* Stops and destroys the sessions (not on a vanished daemon), each
 * command within b. 0, or -1 when the trace may be incomplete (said
 * why); b->stalled when the daemon did not answer in time (then nothing
 * more is asked). */
static int end_sessions(recording *r, setup_budget *b) {
  if (r->sessiond.lost)
    return -1;
  int rc = 0;
  const char *names[2] = {r->live ? r->live_name : NULL, r->disk ? r->disk_name : NULL};
  for (int i = 0; i < 2 && !b->stalled; i++) {
    if (names[i] == NULL)
      continue;
    if (setup_lttng(b, (const char *[]){"stop", names[i], NULL}) != 0) {
      fprintf(stderr, "hoptrace: session %s could not be stopped: its last events may "
                      "be missing\n", names[i]);
      rc = -1;
    }
    if (!b->stalled)
      setup_lttng(b, (const char *[]){"destroy", names[i], NULL});
  }
  return rc;
}

/* 0, -1 (said why) or 1: the session daemon took the first question and
 * did not answer within the bound. */
static int start_daemons(recording *r) {
  int shared = r->o.shared || r->o.pids[0] != '\0' || r->o.nprocnames > 0, rc;
  if (shared) {
    if ((rc = world_sessiond_shared(&r->sessiond, r->o.daemon_ms)) != 0)
      return rc;
  } else if (world_private_enter(r->home, sizeof(r->home)) != 0 ||
             (rc = world_sessiond_start(&r->sessiond, 1, r->o.daemon_ms)) < 0) {
    fprintf(stderr, "hoptrace: no session daemon of this recording's own\n");
    return -1;
  } else if (rc == 1) {
    return 1;
  }
  if (r->live) {
    char out[PATH_MAX + 16];
    const char *home = getenv("HOME");
    if (r->disk)
      snprintf(out, sizeof(out), "%s/relay", r->dir);
    else
      snprintf(out, sizeof(out), "%s/lttng-traces", home ? home : ".");
    if (world_relay_ensure(&r->relayd, r->o.live_url, out) != 0)
      return -1;
  }
  return 0;
}

static void stop_daemons(recording *r) {
  if (r->relayd.ours && !r->relayd.lost) /* let live viewers read the tail */
    sleep(RELAYD_LINGER_S);
  world_daemon_stop(&r->relayd);
  world_daemon_stop(&r->sessiond);
  world_private_leave(r->home);
}

static int prepare(recording *r) {
  const char *name = r->o.name;
  char fallback[64];
  if (name == NULL) {
    snprintf(fallback, sizeof(fallback), "hoptrace-%d-%ld", (int)getpid(), (long)time(NULL));
    name = fallback;
  }
  r->live = r->o.live_url != NULL;
  r->disk = !r->live || r->o.output != NULL;
  snprintf(r->live_name, sizeof(r->live_name), "%s", name);
  snprintf(r->disk_name, sizeof(r->disk_name), r->live ? "%s-disk" : "%s", name);
  if (!r->disk)
    return 0;
  char dir[PATH_MAX];
  snprintf(dir, sizeof(dir), "%s", r->o.output ? r->o.output : name);
  if (output_taken(dir, r->o.force))
    return -1;
  mkdir(dir, 0755);
  if (realpath(dir, r->dir) == NULL) {
    perror(dir);
    return -1;
  }
  return 0;
}

int record_main(int argc, char **argv) {
  static recording r;
  memset(&r, 0, sizeof(r));
  if (record_parse(argc, argv, &r.o) != 0) {
    fputs("usage: hoptrace record [-o DIR [--force]] [--live URL] [--name SESSION] "
          "[--pid PID[,PID...]] [--procname NAME]... [--shared-sessiond] [--keep-going] "
          "[--filter EXPR] "
          "[--subbuf-size SIZE] [--num-subbuf N] [--flight [--flight-size SIZE] "
          "[--flight-names-size SIZE] "
          "[--snapshot-rate R] [--coalesce-ms MS] [--max-defer-ms MS] [--snapshot-max SIZE] "
          "[--trace-ids] [--relay URL]] [--daemon-timeout SECONDS] "
          "-- COMMAND [ARG...]\n",
          stderr);
    return 2;
  }
  if (prepare(&r) != 0)
    return 2;
  struct sigaction sa = {.sa_handler = forward_signal};
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  int status = 2, stalled = 0, bound_ms = r.o.daemon_ms ? r.o.daemon_ms : SPAWN_HELPER_MS;
  char trigger[128] = "";
  setup_budget b = {0};
  int up = start_daemons(&r);
  if (up == 1) {
    say_stalled(&r, "set-up", "lttng list", r.o.daemon_ms ? r.o.daemon_ms : 10000);
    status = EXIT_DAEMON_LOST;
    goto left;
  }
  if (up != 0)
    goto out;
  if (interrupted) {
    status = interrupted;
    goto out;
  }
  setup_budget_start(&b, r.o.daemon_ms);
  if ((r.live && setup_session(&b, r.live_name, &r.o, NULL, r.o.live_url) != 0) ||
      (r.disk && setup_session(&b, r.disk_name, &r.o, r.dir, NULL) != 0) || interrupted) {
    if (b.stalled) {
      say_stalled(&r, "set-up", b.step, b.ms ? b.ms : SPAWN_HELPER_MS);
      status = EXIT_DAEMON_LOST;
      goto left;
    }
    setup_budget tb;
    setup_budget_start(&tb, r.o.daemon_ms);
    if (r.live)
      setup_lttng(&tb, (const char *[]){"destroy", r.live_name, NULL});
    if (r.disk && !tb.stalled)
      setup_lttng(&tb, (const char *[]){"destroy", r.disk_name, NULL});
    status = interrupted ? interrupted : 2;
    goto out;
  }
  flight *fl = NULL;
  int left = setup_budget_left(&b);
  if (r.o.flight && (left == 0 || (fl = flight_start(r.disk_name, r.dir, &r.o.fo, left,
                                                      &stalled)) == NULL)) {
    if (left == 0 || stalled) {
      flight_trigger_name(r.disk_name, trigger, sizeof(trigger));
      say_stalled(&r, "set-up", "registering the flight recorder's trigger, subscribing to "
                  "its notifications", bound_ms);
      status = EXIT_DAEMON_LOST;
      goto left;
    }
    setup_budget tb;
    setup_budget_start(&tb, r.o.daemon_ms);
    setup_lttng(&tb, (const char *[]){"destroy", r.disk_name, NULL});
    goto out;
  }
  status = run_command(&r);
  if (fl != NULL)
    snprintf(trigger, sizeof(trigger), "%s", flight_trigger(fl));
  if (fl != NULL && flight_finish(fl, r.dir, r.sessiond.lost, bound_ms, &stalled) != 0 &&
      status == 0)
    status = 2;
  setup_budget tb;
  setup_budget_start(&tb, r.o.flight ? r.o.daemon_ms : 0); /* without: stop flushes to disk */
  if (stalled)
    say_stalled(&r, "tear-down", "removing the flight recorder's trigger", bound_ms);
  int ended = end_sessions(&r, &tb);
  if (tb.stalled)
    say_stalled(&r, "tear-down", tb.step, tb.ms ? tb.ms : SPAWN_HELPER_MS);
  if (ended != 0)
    status = EXIT_DAEMON_LOST;
  b.created = 2; /* every session was made */
  if (r.live)
    fprintf(stderr, "hoptrace: live session %s streamed to %s (read it at "
                    "net://RELAY/host/HOSTNAME/%s)\n", r.live_name, r.o.live_url, r.live_name);
  if (r.disk && !r.o.flight)
    report_trace(r.dir);
left:
  if (r.sessiond.lost && !r.sessiond.ours)
    say_left_behind(&r, b.created, trigger);
out:
  stop_daemons(&r);
  return status;
}
