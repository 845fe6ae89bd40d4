/* `hoptrace record [-o DIR [--force]] [--live URL] -- COMMAND...`
 *
 * Uses the user's lttng-sessiond when it answers (`lttng list` within
 * PROBE_MS), else starts one of its own (as its child, ready when it
 * says so) and stops exactly that one at the end; a process merely named
 * lttng-sessiond that does not answer is never taken for a daemon. Every
 * lttng command runs with --no-sessiond (the CLI never spawns a daemon
 * nobody would stop) and within SPAWN_HELPER_MS. For a live session to
 * this host it starts lttng-relayd when absent. It creates a session
 * with a user-space channel sized for high event rates (default 8
 * sub-buffers of 2 MiB per CPU, per-user buffers), enables hoptrace:*
 * without contexts (the events carry their process and thread; the
 * process name is written once per process: a `process` event), runs
 * COMMAND, then stops and destroys the session and stops only the
 * daemons it started. Prints the trace path and how many events
 * LTTng discarded. Exits with COMMAND's status. A non-empty -o DIR is
 * refused (exit 2) unless --force: LTTng would overwrite its trace. */
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
#include <time.h>
#include <unistd.h>

#include "cli/spawn.h"
#include "read/bt_source.h"

/* net://HOST[:PORT]... names this machine: a relay we may start. */
static int url_is_local(const char *url) {
  const char *host = strstr(url, "://");
  host = host != NULL ? host + 3 : url;
  static const char *const local[] = {"127.", "localhost", "[::1]", "::1"};
  for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
    if (strncmp(host, local[i], strlen(local[i])) == 0)
      return 1;
  return 0;
}

/* A relay daemon we started outlives the session by this much, so that a
 * live viewer still gets the last packets before it goes. */
#define RELAYD_LINGER_S 5

typedef struct record_options {
  const char *name;
  const char *filter;
  const char *output;
  const char *live_url;
  const char *subbuf_size;
  const char *num_subbuf;
  char **command;
  int force; /* record into a non-empty -o DIR */
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

/* Bounds: a daemon that is stopped (SIGSTOP) accepts connections and
 * never answers. */
#define PROBE_MS 10000
#define SESSIOND_START_MS 20000
#define SESSIOND_STOP_MS 10000

/* 1 when the session daemon lttng talks to (LTTNG_HOME, user) answers. */
static int sessiond_answers(void) {
  char *argv[] = {"lttng", "--no-sessiond", "list", NULL};
  return spawn_bounded(argv, PROBE_MS, 0) == 0;
}

/* 0 when a session daemon answers: the user's, or ours (*ours its pid). */
static int ensure_sessiond(pid_t *ours) {
  *ours = 0;
  if (sessiond_answers())
    return 0;
  pid_t other = process_find("lttng-sessiond");
  char *argv[] = {"lttng-sessiond", "--sig-parent", NULL};
  *ours = spawn_daemon(argv, SESSIOND_START_MS);
  if (*ours > 0 && sessiond_answers()) {
    fprintf(stderr, "hoptrace: started lttng-sessiond (pid %d)\n", (int)*ours);
    return 0;
  }
  if (other > 0)
    fprintf(stderr, "hoptrace: a process named lttng-sessiond (pid %d) runs "
                    "but no session daemon answers, and none could be started; "
                    "stop it or make it answer\n", (int)other);
  spawn_stop(*ours, SESSIOND_STOP_MS);
  *ours = 0;
  return -1;
}

static void stop_sessiond(pid_t pid) {
  if (pid <= 0)
    return;
  spawn_stop(pid, SESSIOND_STOP_MS);
  fprintf(stderr, "hoptrace: stopped lttng-sessiond (pid %d)\n", (int)pid);
}

static pid_t start_daemon(const char *name, char *const argv[]) {
  if (process_running(name))
    return 0;
  if (spawn_quiet(argv) != 0)
    return -1;
  for (int i = 0; i < 50; i++) { /* --daemonize returns once it is ready */
    pid_t pid = process_find(name);
    if (pid > 0) {
      fprintf(stderr, "hoptrace: started %s (pid %d)\n", name, (int)pid);
      return pid;
    }
    usleep(100000);
  }
  return -1;
}

static void stop_daemon(const char *name, pid_t pid) {
  if (pid <= 0)
    return;
  kill(pid, SIGTERM);
  for (int i = 0; i < 100 && kill(pid, 0) == 0; i++)
    usleep(50000);
  fprintf(stderr, "hoptrace: stopped %s (pid %d)\n", name, (int)pid);
}

static int lttng(const char *a, const char *b, const char *c, const char *d,
                 const char *e, const char *f) {
  char *argv[] = {"lttng", "--no-sessiond", "--quiet", (char *)a, (char *)b,
                  (char *)c, (char *)d, (char *)e, (char *)f, NULL};
  return spawn_quiet(argv);
}

static int setup_session(const char *name, const record_options *o, const char *dir) {
  char arg1[PATH_MAX + 32], arg2[256], sub[64], num[64];
  int rc;
  if (o->live_url) {
    snprintf(arg1, sizeof(arg1), "--set-url=%s", o->live_url);
    rc = lttng("create", name, "--live", arg1, NULL, NULL);
  } else {
    snprintf(arg1, sizeof(arg1), "--output=%s", dir);
    rc = lttng("create", name, arg1, NULL, NULL, NULL);
  }
  if (rc != 0)
    return -1;
  snprintf(arg2, sizeof(arg2), "--session=%s", name);
  snprintf(sub, sizeof(sub), "--subbuf-size=%s", o->subbuf_size);
  snprintf(num, sizeof(num), "--num-subbuf=%s", o->num_subbuf);
  if (lttng("enable-channel", arg2, "--userspace", sub, num, "hoptrace") != 0)
    return -1;
  char filter[1024];
  snprintf(filter, sizeof(filter), "--filter=%s", o->filter ? o->filter : "");
  if (lttng("enable-event", arg2, "--userspace", "--channel=hoptrace", "hoptrace:*",
            o->filter ? filter : NULL) != 0 ||
      lttng("start", name, NULL, NULL, NULL, NULL) != 0)
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

/* 1 (said why) when DIR holds something a new session would mix into or
 * overwrite (LTTng reuses its stream file names): a recorded trace is
 * not replaced unless the user said --force. */
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

static int parse(int argc, char **argv, record_options *o) {
  static const struct option longopts[] = {
      {"output", required_argument, NULL, 'o'}, {"live", required_argument, NULL, 'l'},
      {"subbuf-size", required_argument, NULL, 's'},
      {"num-subbuf", required_argument, NULL, 'n'},
      {"name", required_argument, NULL, 'N'},
      {"filter", required_argument, NULL, 'f'}, {"force", no_argument, NULL, 'F'},
      {0, 0, 0, 0}};
  *o = (record_options){.subbuf_size = "2M", .num_subbuf = "8"};
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
    default: return -1;
    }
  }
  if (optind >= argc)
    return -1;
  o->command = argv + optind;
  return 0;
}

int record_main(int argc, char **argv) {
  record_options o;
  if (parse(argc, argv, &o) != 0) {
    fputs("usage: hoptrace record [-o DIR [--force]] [--live URL] [--name SESSION] "
          "[--filter EXPR] [--subbuf-size SIZE] [--num-subbuf N] -- COMMAND [ARG...]\n",
          stderr);
    return 2;
  }
  char name[64], dir[PATH_MAX];
  if (o.name != NULL)
    snprintf(name, sizeof(name), "%s", o.name);
  else
    snprintf(name, sizeof(name), "hoptrace-%d-%ld", (int)getpid(), (long)time(NULL));
  if (o.output == NULL)
    snprintf(dir, sizeof(dir), "%s", name);
  else
    snprintf(dir, sizeof(dir), "%s", o.output);
  char absolute[PATH_MAX];
  if (!o.live_url && output_taken(dir, o.force))
    return 2;
  if (!o.live_url) {
    mkdir(dir, 0755);
    if (realpath(dir, absolute) == NULL) {
      perror(dir);
      return 2;
    }
  }
  char *relayd_argv[] = {"lttng-relayd", "--daemonize", NULL};
  pid_t sessiond = 0, relayd = 0;
  int status = 2;
  struct sigaction sa = {.sa_handler = forward_signal};
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  if (ensure_sessiond(&sessiond) != 0) {
    fprintf(stderr, "hoptrace: no LTTng session daemon\n");
    goto out;
  }
  /* a relay elsewhere (a cluster's central one) is not ours to start */
  if (o.live_url && url_is_local(o.live_url) &&
      (relayd = start_daemon("lttng-relayd", relayd_argv)) < 0) {
    fprintf(stderr, "hoptrace: cannot start lttng-relayd\n");
    goto out;
  }
  if (interrupted) {
    status = interrupted;
    goto out;
  }
  if (setup_session(name, &o, absolute) != 0 || interrupted) {
    lttng("destroy", name, NULL, NULL, NULL, NULL);
    status = interrupted ? interrupted : 2;
    goto out;
  }
  command_pid = spawn_child(o.command);
  status = command_pid > 0 ? spawn_wait(command_pid) : 127;
  command_pid = 0;
  lttng("stop", name, NULL, NULL, NULL, NULL);
  lttng("destroy", name, NULL, NULL, NULL, NULL);
  if (o.live_url)
    fprintf(stderr, "hoptrace: live session %s streamed to %s (read it at "
                    "net://RELAY/host/HOSTNAME/%s)\n", name, o.live_url, name);
  else
    report_trace(absolute);
out:
  if (relayd > 0) /* let live viewers (hoptrace --follow) read the tail */
    sleep(RELAYD_LINGER_S);
  stop_daemon("lttng-relayd", relayd);
  stop_sessiond(sessiond);
  return status;
}
