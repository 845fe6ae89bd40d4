/* The daemons a recording uses (record_world.h): a private session
 * daemon, the machine's for explicit processes, a relay of our own.
 * Must never: find a process by name, signal a process it did not
 * start, or wait for a daemon without a bound. */
#include "cli/record_world.h"

#include <errno.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/spawn.h"

#define PROBE_MS 10000
#define SESSIOND_START_MS 20000
#define DAEMON_STOP_MS 10000
#define RELAYD_READY_MS 15000
#define SHARED_CHECK_MS 1000 /* how often the session daemon is asked while the command runs */
#define PLAIN_ANSWER_MS 3000 /* another's, without a bound given: as before the bounds */

/* ---- the private world ---- */

static int mount_private_tmpfs(const char *what, const char *where, const char *mode) {
  if (mkdir(where, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "hoptrace: mkdir %s: %s\n", where, strerror(errno));
    return -1;
  }
  if (mount(what, where, "tmpfs", MS_NOSUID | MS_NODEV, mode) != 0) {
    fprintf(stderr, "hoptrace: mount tmpfs on %s: %s\n", where, strerror(errno));
    return -1;
  }
  return 0;
}

/* Root's session daemon and every root application meet in
 * /var/run/lttng (and /dev/shm): a mount namespace with empty ones of
 * its own keeps the machine's daemon and other recordings out. */
static int enter_mount_namespace(void) {
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
    fprintf(stderr, "hoptrace: cannot make a private mount namespace (%s): as root, "
                    "a recording's session daemon needs its own /var/run/lttng\n",
            strerror(errno));
    return -1;
  }
  if (mount_private_tmpfs("hoptrace-lttng", "/var/run/lttng", "mode=0755") != 0 ||
      mount_private_tmpfs("hoptrace-shm", "/dev/shm", "mode=1777") != 0)
    return -1;
  return 0;
}

int world_private_enter(char *home, size_t cap) {
  const char *tmp = getenv("TMPDIR");
  if (tmp == NULL || tmp[0] == '\0')
    tmp = "/tmp";
  snprintf(home, cap, "%s/hoptrace-record-%d-XXXXXX", tmp, (int)getpid());
  if (mkdtemp(home) == NULL) {
    fprintf(stderr, "hoptrace: cannot make a private LTTNG_HOME in %s: %s\n", tmp,
            strerror(errno));
    home[0] = '\0';
    return -1;
  }
  /* a user's daemon and apps meet in $LTTNG_HOME/.lttng: a fresh one is
   * ours alone; root's meet in /var/run/lttng as well */
  if (geteuid() == 0 && enter_mount_namespace() != 0) {
    rmdir(home);
    home[0] = '\0';
    return -1;
  }
  setenv("LTTNG_HOME", home, 1);
  return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

void world_private_leave(const char *home) {
  if (home != NULL && home[0] != '\0')
    nftw(home, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- session daemons ---- */

/* 0: a daemon answered within ms; 1: one took the question and did not
 * (stopped, deadlocked); -1: none is there. */
static int sessiond_answers(int ms) {
  char *argv[] = {"lttng", "--no-sessiond", "list", NULL};
  int rc = spawn_bounded(argv, ms > 0 ? ms : PROBE_MS, 0);
  return rc == 0 ? 0 : rc == SPAWN_OVERRAN ? 1 : -1;
}

int world_sessiond_start(rec_daemon *d, int private_world, int probe_ms) {
  char *argv[] = {"lttng-sessiond", "--sig-parent", private_world ? "--no-kernel" : NULL, NULL};
  *d = (rec_daemon){.name = "lttng-sessiond"};
  d->pid = spawn_daemon(argv, SESSIOND_START_MS);
  if (d->pid <= 0) {
    d->pid = 0;
    return -1;
  }
  d->ours = 1;
  fprintf(stderr, "hoptrace: started lttng-sessiond (pid %d)\n", (int)d->pid);
  int answers = sessiond_answers(probe_ms);
  if (answers == 1)
    return 1; /* the caller says so, and stops it */
  if (answers != 0) {
    fprintf(stderr, "hoptrace: the lttng-sessiond started (pid %d) does not answer\n",
            (int)d->pid);
    world_daemon_stop(d);
    return -1;
  }
  return 0;
}

int world_sessiond_shared(rec_daemon *d, int probe_ms) {
  *d = (rec_daemon){.name = "lttng-sessiond"};
  int answers = sessiond_answers(probe_ms);
  if (answers >= 0)
    return answers;
  int rc = world_sessiond_start(d, 0, probe_ms);
  if (rc >= 0)
    return rc;
  /* another recording may have started one at the same moment */
  *d = (rec_daemon){.name = "lttng-sessiond"};
  if ((answers = sessiond_answers(probe_ms)) >= 0)
    return answers;
  fprintf(stderr, "hoptrace: no session daemon answers, and none could be started\n");
  return -1;
}

/* ---- relay ---- */

/* 1 when a TCP socket listens on port (any address) in this network
 * namespace: read from /proc, no connection made. */
static int port_listening(int port) {
  static const char *const tables[] = {"/proc/net/tcp", "/proc/net/tcp6"};
  for (size_t t = 0; t < 2; t++) {
    FILE *f = fopen(tables[t], "r");
    if (f == NULL)
      continue;
    char line[512];
    int found = 0;
    while (!found && fgets(line, sizeof(line), f)) {
      char local[128];
      unsigned state;
      if (sscanf(line, " %*d: %127s %*s %x", local, &state) != 2 || state != 0x0A)
        continue;
      const char *colon = strrchr(local, ':');
      found = colon != NULL && (int)strtol(colon + 1, NULL, 16) == port;
    }
    fclose(f);
    if (found)
      return 1;
  }
  return 0;
}

/* net://HOST[:CTRL[:DATA]][/...] naming this machine: its IPv4 loopback
 * address and ports. 0, or -1 when the URL names another host. */
static int local_relay_url(const char *url, char *host, size_t cap, int *ctrl, int *data) {
  const char *p = strstr(url, "://");
  p = p != NULL ? p + 3 : url;
  size_t n = strcspn(p, ":/");
  if (n == 0 || n >= cap)
    return -1;
  memcpy(host, p, n);
  host[n] = '\0';
  if (strcmp(host, "localhost") == 0)
    snprintf(host, cap, "127.0.0.1");
  if (strncmp(host, "127.", 4) != 0)
    return -1;
  *ctrl = 5342;
  *data = 5343;
  p += n;
  if (*p == ':')
    *ctrl = (int)strtol(p + 1, (char **)&p, 10);
  if (*p == ':')
    *data = (int)strtol(p + 1, (char **)&p, 10);
  if (*ctrl <= 0 || *ctrl > 65535 || *data <= 0 || *data >= 65535)
    return -1;
  return 0;
}

int world_relay_ensure(rec_daemon *d, const char *url, const char *out_dir) {
  char host[64], c[96], dt[96], lv[96], o[4200];
  int ctrl, data;
  *d = (rec_daemon){.name = "lttng-relayd"};
  if (local_relay_url(url, host, sizeof(host), &ctrl, &data) != 0)
    return 0; /* a relay elsewhere (a cluster's central one) is not ours to start */
  if (port_listening(ctrl))
    return 0; /* someone's relay: used, never stopped */
  snprintf(c, sizeof(c), "--control-port=tcp://%s:%d", host, ctrl);
  snprintf(dt, sizeof(dt), "--data-port=tcp://%s:%d", host, data);
  snprintf(lv, sizeof(lv), "--live-port=tcp://%s:%d", host, data + 1);
  snprintf(o, sizeof(o), "--output=%s", out_dir);
  char *argv[] = {"lttng-relayd", c, dt, lv, o, NULL};
  FILE *log = tmpfile();
  pid_t pid = spawn_logged(argv, log);
  for (int waited = 0; pid > 0; waited += 50) {
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) { /* could not bind: someone else did? */
      pid = 0;
      if (port_listening(ctrl)) {
        if (log)
          fclose(log);
        return 0;
      }
      break;
    }
    if (port_listening(ctrl) && port_listening(data) && port_listening(data + 1)) {
      d->pid = pid;
      d->ours = 1;
      fprintf(stderr, "hoptrace: started lttng-relayd (pid %d) on %s:%d-%d\n", (int)pid,
              host, ctrl, data + 1);
      if (log)
        fclose(log);
      return 0;
    }
    if (waited >= RELAYD_READY_MS) {
      spawn_stop(pid, DAEMON_STOP_MS);
      pid = 0;
      break;
    }
    usleep(50000);
  }
  fprintf(stderr, "hoptrace: lttng-relayd on %s:%d-%d did not start listening%s\n", host,
          ctrl, data + 1, log ? "; its output:" : "");
  spawn_print_log(log);
  if (log)
    fclose(log);
  return -1;
}

/* ---- watching and stopping ---- */

void world_daemon_mark_lost(rec_daemon *d, const char *how) {
  d->lost = 1;
  snprintf(d->how, sizeof(d->how), "%s", how);
  clock_gettime(CLOCK_REALTIME, &d->lost_at);
}

int world_daemon_lost(rec_daemon *d, const char *session_name, int answer_ms) {
  if (d->lost)
    return 1;
  if (d->ours && d->pid > 0) {
    int st;
    /* stopped (SIGSTOP, a debugger): alive, its sockets open, and every
     * command to it would wait forever */
    if (waitpid(d->pid, &st, WNOHANG | WUNTRACED) == d->pid) {
      char how[96];
      const char *sig = WIFSIGNALED(st) ? sigabbrev_np(WTERMSIG(st))
                        : WIFSTOPPED(st) ? sigabbrev_np(WSTOPSIG(st)) : NULL;
      if (WIFSTOPPED(st))
        snprintf(how, sizeof(how), "stopped answering (stopped by SIG%s)", sig ? sig : "?");
      else if (WIFSIGNALED(st))
        snprintf(how, sizeof(how), "was killed by SIG%s", sig ? sig : "?");
      else
        snprintf(how, sizeof(how), "exited (status %d)", WEXITSTATUS(st));
      world_daemon_mark_lost(d, how);
      return 1;
    }
  }
  /* by its answer, a deadlocked daemon too (alive, not stopped, its
   * sockets open); without a bound given (plain record), ours is left to
   * waitpid: a loaded machine's slow answer must not end a recording */
  if (answer_ms <= 0 && d->ours)
    return 0;
  if (answer_ms <= 0)
    answer_ms = PLAIN_ANSWER_MS;
  if (session_name != NULL && strcmp(d->name, "lttng-sessiond") == 0) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - d->asked_at.tv_sec) * 1000 +
            (now.tv_nsec - d->asked_at.tv_nsec) / 1000000 < SHARED_CHECK_MS)
      return 0;
    char *argv[] = {"lttng", "--no-sessiond", "list", (char *)session_name, NULL};
    int rc = spawn_bounded(argv, answer_ms, 0);
    clock_gettime(CLOCK_MONOTONIC, &d->asked_at);
    if (rc == SPAWN_OVERRAN) {
      char how[96];
      snprintf(how, sizeof(how), "stopped answering (no answer to 'lttng list' within %.1f s)",
               answer_ms / 1000.0);
      world_daemon_mark_lost(d, how);
      return 1;
    }
    if (rc != 0) {
      world_daemon_mark_lost(d, "stopped answering (or lost the session)");
      return 1;
    }
  }
  return 0;
}

void world_daemon_stop(rec_daemon *d) {
  if (!d->ours || d->pid <= 0)
    return;
  if (d->lost) {
    /* what it left of its process group (consumer daemons, which can do
     * nothing without it) goes too; not waited for: an orphan's zombie
     * is its new parent's to reap */
    kill(-d->pid, SIGTERM);
    usleep(100000);
    kill(-d->pid, SIGKILL);
  } else {
    spawn_stop(d->pid, DAEMON_STOP_MS);
    fprintf(stderr, "hoptrace: stopped %s (pid %d)\n", d->name, (int)d->pid);
  }
  d->pid = 0;
  d->ours = 0;
}

void world_daemon_describe(const rec_daemon *d, const struct timespec *started, char *buf,
                           size_t cap) {
  struct tm tm;
  localtime_r(&d->lost_at.tv_sec, &tm);
  char when[32];
  strftime(when, sizeof(when), "%H:%M:%S", &tm);
  double into = (double)(d->lost_at.tv_sec - started->tv_sec) +
                (double)(d->lost_at.tv_nsec - started->tv_nsec) / 1e9;
  if (d->ours)
    snprintf(buf, cap, "%s (pid %d, started for this recording) %s at %s.%03ld, %.1f s "
                       "into the recording",
             d->name, (int)d->pid, d->how, when, d->lost_at.tv_nsec / 1000000, into);
  else
    snprintf(buf, cap, "%s (the one that answers here, not started by this recording) %s "
                       "at %s.%03ld, %.1f s into the recording",
             d->name, d->how, when, d->lost_at.tv_nsec / 1000000, into);
}
