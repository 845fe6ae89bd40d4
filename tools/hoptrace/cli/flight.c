/* The flight recorder's agent (flight.h): a receiver thread turns the
 * trigger's notifications into fl_policy triggers, a snapshot thread
 * takes the snapshots the policy allows. liblttng-ctl's client commands
 * share one socket per process: register and unregister run before and
 * after the threads, snapshots on the snapshot thread only. */
#include "cli/flight.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <lttng/lttng.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/flight_follow.h"
#include "cli/flight_notify.h"
#include "cli/flight_policy.h"
#include "cli/flight_report.h"

#define DRAIN_QUIET_MS 300 /* no notification for this long: the last arrived */
#define DRAIN_MAX_MS 3000
#define WAKE_SIGNAL SIGURG /* ends the receiver's wait; ignored by default */
/* A snapshot still being taken this long after the run ended is given up
 * (its thread cancelled in liblttng-ctl's wait for the daemon's answer):
 * at once when the daemon is known gone, else after a long while. */
#define GIVE_UP_LOST_MS 1000
#define GIVE_UP_MS 60000

struct flight {
  char session[128], dir[PATH_MAX], where[PATH_MAX], trigger[128];
  uint64_t snapshot_max;
  fl_notify *notify;
  pthread_t receiver, snapshotter;
  pthread_mutex_t mu;
  pthread_cond_t cv; /* a trigger arrived, the run ends, the receiver ended */
  fl_policy policy;
  fl_log log;
  int stop_receiver, receiver_done, final, snapshotter_done;
  int daemon_gone; /* a snapshot was given up: no more commands to it */
  int64_t last_note_ns, started_ns;
  fl_trace open_traces[FL_SNAP_TRACES]; /* the pending batch's */
  unsigned n_open;
  uint64_t open_more;
  unsigned seq;
};

static void geometry(uint64_t bytes, unsigned subbufs, uint64_t *subbuf, unsigned *num) {
  uint64_t s = 4096;
  while (s * subbufs < bytes)
    s <<= 1;
  *subbuf = s;
  *num = subbufs;
}

void flight_geometry(uint64_t bytes, uint64_t *subbuf, unsigned *num) {
  geometry(bytes, FLIGHT_SUBBUFS, subbuf, num);
}

void flight_names_geometry(uint64_t bytes, uint64_t *subbuf, unsigned *num) {
  geometry(bytes, FLIGHT_NAMES_SUBBUFS, subbuf, num);
}

uint64_t flight_parse_size(const char *text) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno != 0 || end == text || text[0] == '-')
    return 0;
  int shift = 0;
  switch (*end) {
  case 'k': case 'K': shift = 10; end++; break;
  case 'm': case 'M': shift = 20; end++; break;
  case 'g': case 'G': shift = 30; end++; break;
  default: break;
  }
  if (*end != '\0' || v > (UINT64_MAX >> shift))
    return 0;
  return (uint64_t)v << shift;
}

/* The CPUs LTTng-UST allocates a ring for: every possible one (a VM may
 * allow more than it has online), from /sys as lttng-ust reads it. */
static unsigned possible_cpus(void) {
  FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
  unsigned n = 0;
  char list[256];
  if (f != NULL && fgets(list, sizeof(list), f) != NULL) {
    for (char *p = list; *p && *p != '\n';) {
      char *end;
      unsigned long a = strtoul(p, &end, 10), b = a;
      if (end == p)
        break;
      if (*end == '-')
        b = strtoul(end + 1, &end, 10);
      n += b >= a ? (unsigned)(b - a + 1) : 0;
      p = *end == ',' ? end + 1 : end;
    }
  }
  if (f != NULL)
    fclose(f);
  long conf = sysconf(_SC_NPROCESSORS_CONF);
  return n > 0 ? n : conf > 0 ? (unsigned)conf : 1;
}

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t wall_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Waits on the condition until now + ns (CLOCK_MONOTONIC condvar). */
static void wait_for(flight *f, int64_t ns) {
  int64_t until = mono_ns() + ns;
  struct timespec ts = {.tv_sec = until / 1000000000, .tv_nsec = until % 1000000000};
  pthread_cond_timedwait(&f->cv, &f->mu, &ts);
}

static void quiet_thread_signals(void) {
  sigset_t all;
  sigfillset(&all);
  sigdelset(&all, WAKE_SIGNAL);
  pthread_sigmask(SIG_SETMASK, &all, NULL);
}

/* liblttng-ctl writes to the daemon's sockets: a daemon gone makes that
 * a SIGPIPE, which would kill record. Every liblttng-ctl call runs on a
 * thread blocking it (the write then fails with EPIPE): the agent's own,
 * or ctl_bounded's. Not SIG_IGN: the recorded command would inherit it. */

static void *receive(void *arg) {
  flight *f = arg;
  quiet_thread_signals();
  for (;;) {
    fl_note note;
    int r = fl_notify_next(f->notify, &note);
    int64_t now = mono_ns();
    pthread_mutex_lock(&f->mu);
    if (r == 1) {
      int kind = fl_policy_trigger(&f->policy, now);
      if (kind == FL_OPENED)
        f->n_open = 0, f->open_more = 0;
      if (kind != FL_DROPPED && note.has_trace && f->n_open < FL_SNAP_TRACES)
        f->open_traces[f->n_open++] =
            (fl_trace){note.trace_hi, note.trace_lo, note.has_why ? note.why : 0};
      else if (kind != FL_DROPPED)
        f->open_more++;
      f->last_note_ns = now;
    } else if (r == 2) {
      f->log.daemon_dropped++;
    } else if (r < 0) {
      f->log.channel_lost = !f->stop_receiver;
    }
    int stop = f->stop_receiver || r < 0;
    if (stop)
      f->receiver_done = 1;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    if (stop)
      return NULL;
  }
}

/* The directory LTTng made for snapshot `prefix` (PREFIX-DATETIME-N). */
static void snapshot_dir(const flight *f, const char *prefix, char *name, size_t cap) {
  snprintf(name, cap, "%s", prefix);
  DIR *d = f->dir[0] ? opendir(f->dir) : NULL;
  if (d == NULL)
    return;
  size_t n = strlen(prefix);
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strncmp(e->d_name, prefix, n) == 0 && e->d_name[n] == '-' &&
        strlen(e->d_name) < cap) {
      memcpy(name, e->d_name, strlen(e->d_name) + 1);
      break;
    }
  closedir(d);
}

/* The snapshot is whole (the daemon answered): a follower
 * (flight_follow.h) may read it now. */
static void mark_written(const flight *f, const char *name) {
  char path[PATH_MAX + 128];
  if (f->dir[0] == '\0' || strchr(name, '/') != NULL ||
      (size_t)snprintf(path, sizeof(path), "%s/%s/" FOLLOW_WRITTEN_MARK, f->dir, name) >=
          sizeof(path))
    return;
  FILE *m = fopen(path, "w");
  if (m != NULL)
    fclose(m);
}

/* What a cancelled snapshot leaves: its output freed, its batch failed
 * (so the counts still add up), the lock held again (the thread ends). */
typedef struct taking {
  flight *f;
  const fl_batch *b;
  struct lttng_snapshot_output *out;
} taking;

static void given_up(void *arg) {
  taking *t = arg;
  lttng_snapshot_output_destroy(t->out);
  pthread_mutex_lock(&t->f->mu);
  fl_policy_done(&t->f->policy, t->b, 0);
  t->f->daemon_gone = 1;
  snprintf(t->f->log.last_failure, sizeof(t->f->log.last_failure),
           "given up: the session daemon did not answer");
  t->f->snapshotter_done = 1;
  pthread_cond_broadcast(&t->f->cv);
  pthread_mutex_unlock(&t->f->mu);
}

/* Takes one snapshot (the lock released meanwhile). The only place the
 * snapshot thread may be cancelled: waiting for the daemon's answer. */
static void take(flight *f, const fl_batch *b, int64_t start_mono_ns) {
  char prefix[32], err[256] = "";
  snprintf(prefix, sizeof(prefix), "capture-%06u", ++f->seq);
  fl_snap s = {.at_ns = wall_ns(), .start_mono_ns = start_mono_ns, .triggers = b->triggers,
               .ntraces = f->n_open,
               .more_traces = f->open_more};
  memcpy(s.traces, f->open_traces, sizeof(s.traces));
  f->n_open = 0;
  f->open_more = 0;
  pthread_mutex_unlock(&f->mu);
  struct lttng_snapshot_output *out = lttng_snapshot_output_create();
  int rc = out == NULL ? -LTTNG_ERR_NOMEM : lttng_snapshot_output_set_name(prefix, out);
  if (rc == 0 && f->snapshot_max != 0)
    rc = lttng_snapshot_output_set_size(f->snapshot_max, out);
  if (rc == 0) {
    taking t = {f, b, out};
    pthread_cleanup_push(given_up, &t);
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
    rc = lttng_snapshot_record(f->session, out, 1);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    pthread_cleanup_pop(0);
  }
  int64_t done = mono_ns();
  s.written_ns = wall_ns();
  lttng_snapshot_output_destroy(out);
  if (rc < 0)
    snprintf(err, sizeof(err), "%s", lttng_strerror(rc));
  else
    snapshot_dir(f, prefix, s.name, sizeof(s.name));
  if (rc >= 0)
    mark_written(f, s.name);
  s.latency_ms = (double)(done - b->first_ns) / 1e6;
  pthread_mutex_lock(&f->mu);
  fl_policy_done(&f->policy, b, rc >= 0);
  if (rc < 0 && f->policy.failures == 1) /* said at once: an operator's setting may be wrong */
    fprintf(stderr, "hoptrace: flight recorder: snapshot %s failed: %s\n", prefix, err);
  if (rc < 0)
    snprintf(f->log.last_failure, sizeof(f->log.last_failure), "%s", err);
  else if (fl_log_add(&f->log, &s) != 0)
    fprintf(stderr, "hoptrace: flight: out of memory listing snapshot %s\n", s.name);
}

static void *snapshot(void *arg) {
  flight *f = arg;
  quiet_thread_signals();
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
  pthread_mutex_lock(&f->mu);
  for (;;) {
    int64_t wait;
    if (fl_policy_ready(&f->policy, mono_ns(), &wait)) {
      int64_t start = mono_ns();
      fl_batch b = fl_policy_start(&f->policy, start);
      take(f, &b, start);
      continue;
    }
    if (f->final && !f->policy.pending)
      break;
    if (f->policy.pending)
      wait_for(f, wait);
    else
      pthread_cond_wait(&f->cv, &f->mu);
  }
  f->snapshotter_done = 1;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
  return NULL;
}

static void on_wake(int sig) { (void)sig; }

const char *flight_trigger(const flight *f) { return f->trigger; }

void flight_trigger_name(const char *session, char *buf, size_t cap) {
  snprintf(buf, cap, "hoptrace-flight-%d-%s", (int)getpid(), session);
}

flight *flight_start(const char *session, const char *dir, const flight_options *o,
                     int setup_ms, int *stalled) {
  *stalled = 0;
  flight *f = calloc(1, sizeof(*f));
  if (f == NULL)
    return NULL;
  snprintf(f->session, sizeof(f->session), "%s", session);
  f->snapshot_max = f->log.snapshot_max = o->snapshot_max;
  snprintf(f->dir, sizeof(f->dir), "%s", o->relay_url ? "" : dir);
  snprintf(f->where, sizeof(f->where), "%s", o->relay_url ? o->relay_url : dir);
  fl_policy_init(&f->policy, (int64_t)o->coalesce_ms * 1000000, o->snapshot_rate,
                 (int64_t)o->max_defer_ms * 1000000);
  uint64_t subbuf;
  unsigned num;
  flight_geometry(o->ring_bytes, &subbuf, &num);
  f->log.ring_bytes = subbuf * num;
  flight_names_geometry(o->names_bytes, &subbuf, &num);
  f->log.names_ring_bytes = subbuf * num;
  f->log.memory_bytes = (f->log.ring_bytes + f->log.names_ring_bytes) * possible_cpus();
  char *name = f->trigger;
  flight_trigger_name(session, name, sizeof(f->trigger));
  if ((f->notify = fl_notify_open_bounded(name, o->event, o->trace_ids, setup_ms, stalled)) == NULL) {
    free(f);
    return NULL;
  }
  struct sigaction sa = {.sa_handler = on_wake}; /* no SA_RESTART: wakes the poll */
  sigaction(WAKE_SIGNAL, &sa, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&f->cv, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&f->mu, NULL);
  f->started_ns = mono_ns();
  if (pthread_create(&f->receiver, NULL, receive, f) != 0) {
    long long discarded;
    *stalled = fl_notify_close_bounded(f->notify, setup_ms, &discarded) != 0;
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f);
    fprintf(stderr, "hoptrace: flight recorder: no thread\n");
    return NULL;
  }
  if (pthread_create(&f->snapshotter, NULL, snapshot, f) != 0) {
    f->final = 1;
    int late;
    flight_finish(f, NULL, 0, setup_ms, &late);
    return NULL;
  }
  fprintf(stderr, "hoptrace: flight recorder: trigger %s on %s; snapshots of session %s "
                  "to %s\n", name, o->event, session, f->where);
  return f;
}

/* Notifications still on their way once the command ended are waited
 * for, until none came for DRAIN_QUIET_MS (at most DRAIN_MAX_MS). */
static void drain(flight *f) {
  int64_t began = mono_ns();
  pthread_mutex_lock(&f->mu);
  for (;;) {
    int64_t now = mono_ns(), last = f->last_note_ns > began ? f->last_note_ns : began;
    int64_t quiet = (int64_t)DRAIN_QUIET_MS * 1000000 - (now - last);
    if (quiet <= 0 || now - began >= (int64_t)DRAIN_MAX_MS * 1000000 || f->receiver_done)
      break;
    wait_for(f, quiet);
  }
  pthread_mutex_unlock(&f->mu);
}

static void stop_receiver(flight *f) {
  pthread_mutex_lock(&f->mu);
  f->stop_receiver = 1;
  pthread_mutex_unlock(&f->mu);
  /* repeated: a signal landing before the thread waits is lost */
  for (;;) {
    pthread_mutex_lock(&f->mu);
    int done = f->receiver_done;
    pthread_mutex_unlock(&f->mu);
    if (done)
      break;
    pthread_kill(f->receiver, WAKE_SIGNAL);
    usleep(10000);
  }
  pthread_join(f->receiver, NULL);
}

/* Ends the snapshot thread: the pending snapshot taken, unless the one
 * being taken waits past the bound for a daemon that does not answer. */
static void stop_snapshots(flight *f, int daemon_lost) {
  pthread_mutex_lock(&f->mu);
  f->final = 1;
  pthread_cond_broadcast(&f->cv);
  int64_t until = mono_ns() + (int64_t)(daemon_lost ? GIVE_UP_LOST_MS : GIVE_UP_MS) * 1000000;
  while (!f->snapshotter_done && mono_ns() < until)
    wait_for(f, until - mono_ns());
  int done = f->snapshotter_done;
  pthread_mutex_unlock(&f->mu);
  if (!done) {
    fprintf(stderr, "hoptrace: flight recorder: the session daemon did not answer a "
                    "snapshot within %d s: given up\n",
            (daemon_lost ? GIVE_UP_LOST_MS : GIVE_UP_MS) / 1000);
    pthread_cancel(f->snapshotter);
  }
  pthread_join(f->snapshotter, NULL);
}

int flight_finish(flight *f, const char *out_dir, int daemon_lost, int teardown_ms,
                  int *stalled) {
  *stalled = 0;
  int started = !f->final;
  if (started && !daemon_lost)
    drain(f);
  stop_receiver(f);
  if (started)
    stop_snapshots(f, daemon_lost);
  /* a batch opened while the given-up snapshot hung is never taken: its
   * triggers are dropped, so the counts still add up */
  fl_policy_abandon(&f->policy);
  f->log.tracer_discarded = -1;
  if (daemon_lost || f->daemon_gone) /* asking it would wait forever */
    fl_notify_abandon(f->notify);
  else
    *stalled = fl_notify_close_bounded(f->notify, teardown_ms, &f->log.tracer_discarded) != 0;
  int rc = 0;
  f->log.seconds = (double)(mono_ns() - f->started_ns) / 1e9;
  if (out_dir != NULL) {
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/capture.json", out_dir);
    if (fl_report_write(path, &f->policy, &f->log) != 0) {
      fprintf(stderr, "hoptrace: flight recorder: %s: %s\n", path, strerror(errno));
      rc = -1;
    }
    fl_report_summary(stderr, &f->policy, &f->log, f->where);
  }
  fl_log_free(&f->log);
  pthread_cond_destroy(&f->cv);
  pthread_mutex_destroy(&f->mu);
  free(f);
  return rc;
}
