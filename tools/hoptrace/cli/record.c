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
 * lttng command runs with --no-sessiond, within SPAWN_HELPER_MS.
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
 * (--flight-size bytes a CPU, per-user buffers) and nothing is written
 * until a trigger fires (the capture event); then the ring is snapshot
 * into -o DIR (or to the relay at --relay URL), and DIR/capture.json
 * counts what fired and what was written. */
#include "cli/record.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
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
#include "cli/record_world.h"
#include "cli/spawn.h"
#include "read/bt_source.h"
#include "hoptrace_schema.h"

/* A relay daemon we started outlives the session by this much, so that a
 * live viewer still gets the last packets before it goes. */
#define RELAYD_LINGER_S 5
#define MAX_PROCNAMES 16
#define COMMAND_GRACE_MS 1000 /* SIGTERM to SIGKILL when a daemon vanished */
#define EXIT_DAEMON_LOST 3

typedef struct record_options {
  const char *name;
  const char *filter;
  const char *output;
  const char *live_url;
  const char *subbuf_size;
  const char *num_subbuf;
  char pids[1024];
  const char *procnames[MAX_PROCNAMES];
  int nprocnames;
  char **command;
  int force;      /* record into a non-empty -o DIR */
  int keep_going; /* a vanished daemon does not end COMMAND */
  int shared;     /* the session daemon that answers, not one of our own */
  int flight;     /* --flight: a snapshot session and its trigger (flight.h) */
  flight_options fo;
} record_options;

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

/* Runs `lttng --no-sessiond --quiet ARGS...` (args NULL-terminated, at
 * most 8). */
static int lttng(const char *const *args) {
  char *argv[12] = {"lttng", "--no-sessiond", "--quiet"};
  int n = 3;
  for (; *args != NULL && n < 11; args++)
    argv[n++] = (char *)*args;
  argv[n] = NULL;
  return spawn_quiet(argv);
}

/* The filter the session applies: the user's, and the procnames named. */
static void session_filter(const record_options *o, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  if (o->filter != NULL)
    n += (size_t)snprintf(buf + n, cap - n, "(%s)%s", o->filter, o->nprocnames ? " && (" : "");
  for (int i = 0; i < o->nprocnames && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s$ctx.procname == \"%s\"", i ? " || " : "",
                          o->procnames[i]);
  if (o->filter != NULL && o->nprocnames && n < cap)
    snprintf(buf + n, cap - n, ")");
}

/* The events that name a process's ids. Any process can write them
 * with any vpid field; LTTng's vpid context says who wrote them, so they
 * get a channel of their own with that context (a few events a second:
 * the spans' channel stays without contexts, at its cost). */
#define NAME_EVENTS "hoptrace:process,hoptrace:desc,hoptrace:peer"

/* Every other event of the schema, named (not `hoptrace:*` with an
 * exclusion: lttng-sessiond 2.13 crashed on that in a session with a
 * trigger). */
#define EVENT_NAME(event, fields) "hoptrace:" #event,
static const char *const schema_events[] = {HT_SCHEMA_EVENTS(EVENT_NAME)};
#undef EVENT_NAME

static void span_events(char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof(schema_events) / sizeof(schema_events[0]); i++) {
    const char *e = schema_events[i];
    char item[64];
    snprintf(item, sizeof(item), "%s,", e);
    if (strstr(NAME_EVENTS ",", item) == NULL && n < cap)
      n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "," : "", e);
  }
}

static int names_channel(const char *sess, const record_options *o, const char *mode,
                         const char *flt) {
  char sub[64], num[64];
  /* a process names at most 2^16 ids; its names come again each second */
  snprintf(sub, sizeof(sub), "--subbuf-size=%s", o->flight ? "64K" : "256K");
  snprintf(num, sizeof(num), "--num-subbuf=%d", 4);
  return lttng((const char *[]){"enable-channel", sess, "--userspace", "--buffers-uid", sub,
                                num, "hoptrace_names", mode, NULL}) != 0 ||
                 lttng((const char *[]){"add-context", sess, "--userspace",
                                        "--channel=hoptrace_names", "--type=vpid", NULL}) != 0 ||
                 lttng((const char *[]){"enable-event", sess, "--userspace",
                                        "--channel=hoptrace_names", NAME_EVENTS, flt, NULL}) != 0
             ? -1
             : 0;
}

/* One session: to disk (dir) or live (url). */
static int setup_session(const char *name, const record_options *o, const char *dir,
                         const char *url) {
  char where[PATH_MAX + 32], sess[256], sub[64], num[64], filter[4096], flt[4200];
  if (o->flight) {
    /* in memory only; a snapshot goes where the session's output says */
    if (o->fo.relay_url != NULL)
      snprintf(where, sizeof(where), "--set-url=%s", o->fo.relay_url);
    else
      snprintf(where, sizeof(where), "--output=%s", dir);
    if (lttng((const char *[]){"create", name, "--snapshot", where, NULL}) != 0)
      return -1;
  } else if (url != NULL) {
    snprintf(where, sizeof(where), "--set-url=%s", url);
    if (lttng((const char *[]){"create", name, "--live", where, NULL}) != 0)
      return -1;
  } else {
    snprintf(where, sizeof(where), "--output=%s", dir);
    if (lttng((const char *[]){"create", name, where, NULL}) != 0)
      return -1;
  }
  snprintf(sess, sizeof(sess), "--session=%s", name);
  snprintf(sub, sizeof(sub), "--subbuf-size=%s", o->subbuf_size);
  snprintf(num, sizeof(num), "--num-subbuf=%s", o->num_subbuf);
  if (o->flight) {
    uint64_t sb;
    unsigned nb;
    flight_geometry(o->fo.ring_bytes, &sb, &nb);
    snprintf(sub, sizeof(sub), "--subbuf-size=%llu", (unsigned long long)sb);
    snprintf(num, sizeof(num), "--num-subbuf=%u", nb);
  }
  /* on disk, a packet a second: what a vanished daemon takes with it; a
   * snapshot flushes the packets itself */
  const char *timer = url != NULL || o->flight ? NULL : "--switch-timer=1000000";
  const char *mode = o->flight ? "--overwrite" : NULL;
  if (lttng((const char *[]){"enable-channel", sess, "--userspace", "--buffers-uid", sub, num,
                             "hoptrace", mode ? mode : timer, NULL}) != 0)
    return -1;
  if (o->pids[0] != '\0') {
    char vpid[1100];
    snprintf(vpid, sizeof(vpid), "--vpid=%s", o->pids);
    if (lttng((const char *[]){"track", sess, "--userspace", vpid, NULL}) != 0)
      return -1;
  }
  session_filter(o, filter, sizeof(filter));
  snprintf(flt, sizeof(flt), "--filter=%s", filter);
  char events[512];
  span_events(events, sizeof(events));
  if (lttng((const char *[]){"enable-event", sess, "--userspace", "--channel=hoptrace",
                             events, filter[0] ? flt : NULL, NULL}) != 0 ||
      names_channel(sess, o, mode ? mode : timer, filter[0] ? flt : NULL) != 0 ||
      lttng((const char *[]){"start", name, NULL}) != 0)
    return -1;
  return 0;
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

static int add_pids(record_options *o, const char *list) {
  for (const char *p = list; *p; p++)
    if ((*p < '0' || *p > '9') && *p != ',')
      return -1;
  size_t n = strlen(o->pids);
  if (n + strlen(list) + 2 >= sizeof(o->pids))
    return -1;
  snprintf(o->pids + n, sizeof(o->pids) - n, "%s%s", n ? "," : "", list);
  return 0;
}

static int parse(int argc, char **argv, record_options *o) {
  static const struct option longopts[] = {
      {"output", required_argument, NULL, 'o'}, {"live", required_argument, NULL, 'l'},
      {"subbuf-size", required_argument, NULL, 's'},
      {"num-subbuf", required_argument, NULL, 'n'},
      {"name", required_argument, NULL, 'N'},
      {"filter", required_argument, NULL, 'f'}, {"force", no_argument, NULL, 'F'},
      {"pid", required_argument, NULL, 'p'}, {"procname", required_argument, NULL, 'P'},
      {"keep-going", no_argument, NULL, 'k'},
      {"shared-sessiond", no_argument, NULL, 'S'},
      {"flight", no_argument, NULL, 'R'}, {"flight-size", required_argument, NULL, 1},
      {"snapshot-rate", required_argument, NULL, 2},
      {"coalesce-ms", required_argument, NULL, 3},
      {"max-defer-ms", required_argument, NULL, 4},
      {"capture-event", required_argument, NULL, 5}, /* tests: another event */
      {"relay", required_argument, NULL, 6},
      {"snapshot-max", required_argument, NULL, 7},
      {"trace-ids", no_argument, NULL, 8},
      {0, 0, 0, 0}};
  *o = (record_options){.subbuf_size = "2M", .num_subbuf = "8"};
  o->fo = (flight_options){.ring_bytes = FLIGHT_DEFAULT_RING, .snapshot_rate = 2,
                           .coalesce_ms = 20, .max_defer_ms = 1000,
                           .event = "hoptrace:capture"};
  char *end;
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+o:", longopts, NULL)) != -1) {
    switch (c) {
    case 'o': o->output = optarg; break;
    case 'l': o->live_url = optarg; break;
    case 's': o->subbuf_size = optarg; break;
    case 'n': o->num_subbuf = optarg; break;
    case 'N': o->name = optarg; break;
    case 'f': o->filter = optarg; break;
    case 'F': o->force = 1; break;
    case 'k': o->keep_going = 1; break;
    case 'S': o->shared = 1; break;
    case 'R': o->flight = 1; break;
    case 1:
      if ((o->fo.ring_bytes = flight_parse_size(optarg)) == 0) {
        fprintf(stderr, "hoptrace: --flight-size wants a size (16M, 512k): %s\n", optarg);
        return -1;
      }
      break;
    case 2:
      o->fo.snapshot_rate = strtod(optarg, &end);
      if (*end != '\0' || !(o->fo.snapshot_rate > 0 && o->fo.snapshot_rate <= 1000)) {
        fprintf(stderr, "hoptrace: --snapshot-rate wants snapshots a second in (0, 1000]\n");
        return -1;
      }
      break;
    case 3:
    case 4: {
      long ms = strtol(optarg, &end, 10);
      if (*end != '\0' || ms < 0 || ms > 3600000) {
        fprintf(stderr, "hoptrace: --%s wants milliseconds\n",
                c == 3 ? "coalesce-ms" : "max-defer-ms");
        return -1;
      }
      *(c == 3 ? &o->fo.coalesce_ms : &o->fo.max_defer_ms) = (int)ms;
      break;
    }
    case 5: o->fo.event = optarg; break;
    case 6: o->fo.relay_url = optarg; break;
    case 8: o->fo.trace_ids = 1; break;
    case 7:
      if ((o->fo.snapshot_max = flight_parse_size(optarg)) == 0) {
        fprintf(stderr, "hoptrace: --snapshot-max wants a size (4M): %s\n", optarg);
        return -1;
      }
      break;
    case 'p':
      if (add_pids(o, optarg) != 0) {
        fprintf(stderr, "hoptrace: --pid wants PID[,PID...]: %s\n", optarg);
        return -1;
      }
      break;
    case 'P':
      if (o->nprocnames == MAX_PROCNAMES || strchr(optarg, '"') || strchr(optarg, '\\')) {
        fprintf(stderr, "hoptrace: --procname: at most %d names, without quotes or "
                        "backslashes\n", MAX_PROCNAMES);
        return -1;
      }
      o->procnames[o->nprocnames++] = optarg;
      break;
    default: return -1;
    }
  }
  if (optind >= argc)
    return -1;
  if (o->flight && o->live_url != NULL) {
    fprintf(stderr, "hoptrace: --flight records in memory: not with --live (use --relay)\n");
    return -1;
  }
  if (!o->flight && o->fo.relay_url != NULL) {
    fprintf(stderr, "hoptrace: --relay goes with --flight\n");
    return -1;
  }
  o->command = argv + optind;
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
    if (!lost && world_daemon_lost(&r->sessiond, watched))
      gone = &r->sessiond;
    else if (!lost && r->relayd.ours && world_daemon_lost(&r->relayd, NULL))
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
 * it (asking now would wait on it). */
static void say_left_behind(const recording *r, const char *trigger) {
  const char *names[2] = {r->live ? r->live_name : NULL, r->disk ? r->disk_name : NULL};
  for (int i = 0; i < 2; i++)
    if (names[i] != NULL)
      fprintf(stderr, "hoptrace: session %s may remain on that daemon: once it answers, "
                      "'lttng destroy %s'\n", names[i], names[i]);
  if (trigger[0] != '\0')
    fprintf(stderr, "hoptrace: the flight recorder's trigger may remain on that daemon: "
                    "once it answers, 'lttng remove-trigger %s'\n", trigger);
}

/* Stops and destroys the sessions (not on a vanished daemon). 0, or -1
 * when the trace may be incomplete (said why). */
static int end_sessions(recording *r) {
  if (r->sessiond.lost)
    return -1;
  int rc = 0;
  const char *names[2] = {r->live ? r->live_name : NULL, r->disk ? r->disk_name : NULL};
  for (int i = 0; i < 2; i++) {
    if (names[i] == NULL)
      continue;
    if (lttng((const char *[]){"stop", names[i], NULL}) != 0) {
      fprintf(stderr, "hoptrace: session %s could not be stopped: its last events may "
                      "be missing\n", names[i]);
      rc = -1;
    }
    lttng((const char *[]){"destroy", names[i], NULL});
  }
  return rc;
}

static int start_daemons(recording *r) {
  int shared = r->o.shared || r->o.pids[0] != '\0' || r->o.nprocnames > 0;
  if (shared) {
    if (world_sessiond_shared(&r->sessiond) != 0)
      return -1;
  } else if (world_private_enter(r->home, sizeof(r->home)) != 0 ||
             world_sessiond_start(&r->sessiond, 1) != 0) {
    fprintf(stderr, "hoptrace: no session daemon of this recording's own\n");
    return -1;
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
  if (parse(argc, argv, &r.o) != 0) {
    fputs("usage: hoptrace record [-o DIR [--force]] [--live URL] [--name SESSION] "
          "[--pid PID[,PID...]] [--procname NAME]... [--shared-sessiond] [--keep-going] "
          "[--filter EXPR] "
          "[--subbuf-size SIZE] [--num-subbuf N] [--flight [--flight-size SIZE] "
          "[--snapshot-rate R] [--coalesce-ms MS] [--max-defer-ms MS] [--snapshot-max SIZE] "
          "[--trace-ids] [--relay URL]] "
          "-- COMMAND [ARG...]\n",
          stderr);
    return 2;
  }
  if (prepare(&r) != 0)
    return 2;
  struct sigaction sa = {.sa_handler = forward_signal};
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  int status = 2;
  if (start_daemons(&r) != 0)
    goto out;
  if (interrupted) {
    status = interrupted;
    goto out;
  }
  if ((r.live && setup_session(r.live_name, &r.o, NULL, r.o.live_url) != 0) ||
      (r.disk && setup_session(r.disk_name, &r.o, r.dir, NULL) != 0) || interrupted) {
    if (r.live)
      lttng((const char *[]){"destroy", r.live_name, NULL});
    if (r.disk)
      lttng((const char *[]){"destroy", r.disk_name, NULL});
    status = interrupted ? interrupted : 2;
    goto out;
  }
  flight *fl = NULL;
  if (r.o.flight && (fl = flight_start(r.disk_name, r.dir, &r.o.fo)) == NULL) {
    lttng((const char *[]){"destroy", r.disk_name, NULL});
    goto out;
  }
  status = run_command(&r);
  char trigger[128] = "";
  if (fl != NULL)
    snprintf(trigger, sizeof(trigger), "%s", flight_trigger(fl));
  if (fl != NULL && flight_finish(fl, r.dir, r.sessiond.lost) != 0 && status == 0)
    status = 2;
  if (end_sessions(&r) != 0 && status != EXIT_DAEMON_LOST)
    status = EXIT_DAEMON_LOST;
  if (r.sessiond.lost && !r.sessiond.ours)
    say_left_behind(&r, trigger);
  if (r.live)
    fprintf(stderr, "hoptrace: live session %s streamed to %s (read it at "
                    "net://RELAY/host/HOSTNAME/%s)\n", r.live_name, r.o.live_url, r.live_name);
  if (r.disk && !r.o.flight)
    report_trace(r.dir);
out:
  stop_daemons(&r);
  return status;
}
