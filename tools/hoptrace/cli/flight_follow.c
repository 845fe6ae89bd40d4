/* Following flight-recorder snapshots as they are written
 * (flight_follow.h). Each snapshot is read on its own; an event a
 * snapshot shares with its session's previous one (same time, same
 * content: dedupe.h's hash) is skipped when its trace is still held from
 * before, or already written. A trace no capture reached yet is held
 * (without --all: never written) so that a capture reaching it in a later
 * snapshot finds the part only earlier snapshots held (its host's ring
 * wrapped in between), as offline reading of every snapshot does. Held
 * until HOLD_SNAPSHOTS snapshots have been read without adding to it,
 * and at most half of --max-open-traces and --max-open-spans (the other
 * half is the captured traces' and the snapshot being read's), the least
 * recently added to dropped first; each drop is counted in the summary.
 * Must never write a trace twice nor hold more than the open-trace
 * limits and one snapshot's event list a session. */
#include "cli/flight_follow.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "assemble/idmap.h"
#include "cli/flight_follow_scan.h"
#include "read/dedupe.h"
#include "read/limits.h"
#include "read/names.h"
#include "read/trace_dirs.h"
#include "util/grow.h"

/* Events of one snapshot remembered (16 bytes each) to skip their copies
 * in the next: past this, the rest are not, and their copies pass (the
 * assembler flags a span read twice). */
#define REMEMBER_MAX ((size_t)1 << 22)
/* Traces written remembered, so that a later snapshot's copy of one is
 * not written again: the oldest forgotten past this. */
#define WRITTEN_MAX 65536
/* An uncaptured trace is dropped once this many snapshots were read
 * without adding to it: counted in snapshots, not seconds, so that a
 * follower reading a backlog at once holds what a live one would (at the
 * default 2 snapshots/s a host, >= 16 s for one host, >= 5 s for three). */
#define HOLD_SNAPSHOTS 32

typedef struct seen {
  int64_t ts;
  uint64_t hash;
} seen;

/* A session's (a snapshot directory's parent's) previous snapshot. */
typedef struct session {
  char *dir;
  seen *prev;
  size_t n_prev, cursor;
} session;

typedef struct follower {
  const follow_options *o;
  assembler *a;
  follow_stats *fs;
  int64_t stamp; /* the snapshot being read's */
  session *sessions;
  size_t n_sessions;
  session *cur_session;
  seen *cur; /* the snapshot being read's events */
  size_t n_cur, cap_cur;
  idmap written;
  uint64_t (*written_ids)[2]; /* ring, oldest at written_head */
  size_t written_head, n_written;
  int64_t now_ns;
  names *names; /* every snapshot's name tables, kept: a snapshot whose
                   names ring wrapped is named from the earlier ones */
  int64_t read_stamps[HOLD_SNAPSHOTS]; /* the last snapshots read's stamps */
  uint64_t n_read;
  uint64_t held_traces, held_spans; /* uncaptured, counted before a drop */
} follower;

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void remember(follower *f, int64_t ts, uint64_t hash) {
  if (f->n_cur + 1 > REMEMBER_MAX ||
      ht_grow(&f->cur, &f->cap_cur, f->n_cur + 1, sizeof(seen), 1024) != 0) {
    f->fs->remembered_full++;
    return;
  }
  f->cur[f->n_cur++] = (seen){ts, hash};
}

/* The previous snapshot held this event: both lists are in time order
 * (the merged stream), so a cursor walks the previous one once. */
static bool held_before(session *s, int64_t ts, uint64_t hash) {
  while (s->cursor < s->n_prev && s->prev[s->cursor].ts < ts)
    s->cursor++;
  for (size_t i = s->cursor; i < s->n_prev && s->prev[i].ts == ts; i++)
    if (s->prev[i].hash == hash)
      return true;
  return false;
}

static bool skip(void *user, const hop_event *ev) {
  follower *f = user;
  uint64_t hash = event_dedupe_hash(ev);
  remember(f, ev->ts_ns, hash);
  bool copy = f->cur_session != NULL && held_before(f->cur_session, ev->ts_ns, hash);
  if (idmap_get(&f->written, ev->trace_hi, ev->trace_lo) != NULL) {
    f->fs->late += !copy;
    return true;
  }
  int64_t born;
  /* held since an earlier snapshot: it has this event already; opened
   * in this one (or dropped before): it takes every event again */
  if (copy && assembler_open_born(f->a, ev->trace_hi, ev->trace_lo, &born) && born < f->stamp) {
    f->fs->copies++;
    return true;
  }
  return false;
}

static session *session_for(follower *f, const char *dir, size_t len) {
  for (size_t i = 0; i < f->n_sessions; i++)
    if (strncmp(f->sessions[i].dir, dir, len) == 0 && f->sessions[i].dir[len] == '\0')
      return &f->sessions[i];
  session *grown = realloc(f->sessions, (f->n_sessions + 1) * sizeof(*grown));
  if (grown == NULL)
    return NULL;
  f->sessions = grown;
  session *s = &f->sessions[f->n_sessions];
  *s = (session){.dir = strndup(dir, len)};
  if (s->dir == NULL)
    return NULL;
  f->n_sessions++;
  return s;
}

static void add_stats(bt_source_stats *sum, const bt_source_stats *s) {
  sum->events += s->events;
  sum->hop_events += s->hop_events;
  sum->malformed_events += s->malformed_events;
  sum->foreign_names += s->foreign_names;
  sum->discarded_events += s->discarded_events;
  sum->discarded_packets += s->discarded_packets;
  sum->trace_dirs += s->trace_dirs;
  sum->unresolved_names += s->unresolved_names;
  sum->redefined_names += s->redefined_names;
  sum->duplicate_events += s->duplicate_events;
  sum->flight = true;
}

static bool counts(const follower *f, const trace *t) { return f->o->all || t->capture != NULL; }

static bool count_held(void *user, trace *t, int64_t touched) {
  follower *f = user;
  (void)touched;
  if (t->capture == NULL) {
    f->held_traces++;
    f->held_spans += t->n_spans;
  }
  return false;
}

/* Without --all, an uncaptured trace past the hold (the opening
 * comment): the walk goes least recently added to first. */
static bool past_hold(void *user, trace *t, int64_t touched) {
  follower *f = user;
  if (t->capture != NULL)
    return false;
  bool aged = f->n_read >= HOLD_SNAPSHOTS && touched < f->read_stamps[f->n_read % HOLD_SNAPSHOTS];
  bool full = !aged && (f->held_traces > ht_limits.open_traces / 2 ||
                        f->held_spans > ht_limits.open_spans / 2);
  if (!aged && !full)
    return false;
  f->fs->held_aged += aged;
  f->fs->held_full += full;
  f->held_traces--;
  f->held_spans -= t->n_spans;
  return true;
}

static void drop_past_hold(follower *f) {
  f->held_traces = f->held_spans = 0;
  assembler_emit_if(f->a, count_held, f);
  assembler_emit_if(f->a, past_hold, f);
}

/* touched + settle <= now, without overflow (settle up to a day) */
static bool settled_by(const follower *f, int64_t touched) {
  int64_t due;
  return !__builtin_add_overflow(touched, f->o->settle_ns, &due) ? due <= f->now_ns
                                                                 : f->now_ns == INT64_MAX;
}

static void forget_oldest_written(follower *f) {
  uint64_t *id = f->written_ids[f->written_head];
  idmap_remove(&f->written, id[0], id[1]);
  f->written_head = (f->written_head + 1) % WRITTEN_MAX;
  f->n_written--;
}

/* Every trace written (settled, or early past a limit) is remembered:
 * its copies in later snapshots are skipped, never written again. */
static void wrote(void *user, const trace *t) {
  follower *f = user;
  if (f->n_written == WRITTEN_MAX)
    forget_oldest_written(f);
  size_t at = (f->written_head + f->n_written) % WRITTEN_MAX;
  if (idmap_put(&f->written, t->trace_hi, t->trace_lo, f->written_ids[at]) == 0) {
    f->written_ids[at][0] = t->trace_hi;
    f->written_ids[at][1] = t->trace_lo;
    f->n_written++;
  }
}

/* Settled: no snapshot added to it for the settle time (an uncaptured
 * one, without --all, waits for a capture: past_hold drops it). */
static bool settled(void *user, trace *t, int64_t touched) {
  return counts(user, t) && settled_by(user, touched);
}

/* The follower stops: what it holds is written now, the traces not
 * settled yet marked so. */
static bool at_stop(void *user, trace *t, int64_t touched) {
  follower *f = user;
  if (counts(f, t) && !settled_by(f, touched)) {
    t->unsettled = true;
    f->fs->unsettled++;
  }
  return true;
}

static int read_snapshot(follower *f, follow_snap *snap, const bt_source_callbacks *cb,
                         void *user, bt_source_stats *stats, atomic_int *stop, char *err,
                         size_t err_len) {
  const char *dir = snap->dir;
  bt_source *src = bt_source_open(&dir, 1, 1);
  session *s = src != NULL ? session_for(f, snap->dir, snap->parent) : NULL;
  if (s == NULL) {
    bt_source_close(src);
    snprintf(err, err_len, "out of memory");
    return -1;
  }
  /* strictly increasing: traces opened by this snapshot are told apart */
  int64_t now = mono_ns();
  f->stamp = now > f->stamp ? now : f->stamp + 1;
  assembler_set_stamp(f->a, f->stamp);
  f->cur_session = s;
  s->cursor = 0;
  f->n_cur = 0;
  bt_source_set_skip(src, skip, f);
  bt_source_share_names(src, f->names);
  bt_source_stats one = {0};
  uint64_t copies = f->fs->copies;
  int rc = bt_source_read(src, cb, user, &one, stop, err, err_len);
  bt_source_close(src);
  add_stats(stats, &one);
  stats->duplicate_events += f->fs->copies - copies;
  f->cur_session = NULL;
  snap->read = true;
  f->fs->snapshots++;
  /* this snapshot's events are what the next one may copy */
  free(s->prev);
  s->prev = f->cur;
  s->n_prev = f->n_cur;
  f->cur = NULL;
  f->n_cur = f->cap_cur = 0;
  f->read_stamps[f->n_read++ % HOLD_SNAPSHOTS] = f->stamp;
  if (rc == 0 && !f->o->all)
    drop_past_hold(f);
  return rc;
}

static int by_session_then_n(const void *x, const void *y) {
  const follow_snap *a = *(follow_snap *const *)x, *b = *(follow_snap *const *)y;
  int c = strcmp(a->dir, b->dir);
  if (a->parent == b->parent && strncmp(a->dir, b->dir, a->parent) == 0)
    return a->n < b->n ? -1 : a->n > b->n;
  return c;
}

/* The whole snapshots not read yet, each session's in their order. */
static int read_ready(follower *f, follow_scan *scan, const bt_source_callbacks *cb,
                      void *user, bt_source_stats *stats, atomic_int *stop, char *err,
                      size_t err_len, bool *got) {
  follow_snap **ready = malloc((scan->n ? scan->n : 1) * sizeof(*ready));
  if (ready == NULL) {
    snprintf(err, err_len, "out of memory");
    return -1;
  }
  size_t n = 0;
  for (size_t i = 0; i < scan->n; i++)
    if (scan->snaps[i].whole && !scan->snaps[i].read)
      ready[n++] = &scan->snaps[i];
  qsort(ready, n, sizeof(*ready), by_session_then_n);
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < n && !*stop; i++) {
    rc = read_snapshot(f, ready[i], cb, user, stats, stop, err, err_len);
    *got = true;
  }
  free(ready);
  return rc;
}

static void pause_poll(void) {
  struct timespec ts = {0, (long)FOLLOW_POLL_MS * 1000000};
  nanosleep(&ts, NULL); /* a signal cuts it short: the loop looks at stop */
}

int flight_follow_read(const char *const *inputs, size_t n_inputs, assembler *a,
                       const follow_options *o, const bt_source_callbacks *cb, void *user,
                       bt_source_stats *stats, follow_stats *fs, atomic_int *stop, char *err,
                       size_t err_len) {
  follower f = {.o = o, .a = a, .fs = fs};
  follow_scan scan = {0};
  *stats = (bt_source_stats){.flight = true};
  *fs = (follow_stats){0};
  f.written_ids = calloc(WRITTEN_MAX, sizeof(*f.written_ids));
  f.names = names_new();
  int64_t last_new = mono_ns();
  bool told = false, whole = false;
  if (f.written_ids != NULL)
    assembler_set_emitted(a, wrote, &f);
  int rc = f.written_ids == NULL || f.names == NULL ? (snprintf(err, err_len, "out of memory"), -1) : 0;
  while (rc == 0 && !*stop) {
    /* looked at first: a recorder that has ended wrote every snapshot
     * before it, so the scan below finds them all whole */
    bool ended = follow_scan_ended(inputs, n_inputs);
    int64_t now = mono_ns();
    int found = follow_scan_run(&scan, inputs, n_inputs, now);
    if (found != 0) {
      snprintf(err, err_len, "%s: %s", inputs[0], bt_trace_dirs_error(found));
      rc = -1;
      break;
    }
    if (scan.not_snapshot && !told) {
      fprintf(stderr, "hoptrace: --follow reads flight-recorder snapshots; the traces below "
                      "%s outside a snapshot directory are not read\n", inputs[0]);
      told = true;
    }
    bool got = false;
    rc = read_ready(&f, &scan, cb, user, stats, stop, err, err_len, &got);
    f.now_ns = mono_ns();
    if (got)
      last_new = f.now_ns;
    assembler_emit_if(a, settled, &f);
    if (cb->on_idle != NULL)
      cb->on_idle(user);
    bool unread = false;
    for (size_t i = 0; i < scan.n; i++)
      unread |= !scan.snaps[i].read;
    whole = rc == 0 && ended && !unread;
    if (rc != 0 || whole ||
        (o->quiet_ns >= 0 && f.now_ns - last_new >= o->quiet_ns))
      break;
    pause_poll();
  }
  /* the recorder ended and every snapshot is read: nothing more can
   * come, every trace is settled */
  f.now_ns = whole ? INT64_MAX : mono_ns();
  assembler_emit_if(a, at_stop, &f);
  assembler_set_emitted(a, NULL, NULL); /* f is gone after this */
  follow_scan_free(&scan);
  for (size_t i = 0; i < f.n_sessions; i++) {
    free(f.sessions[i].dir);
    free(f.sessions[i].prev);
  }
  free(f.sessions);
  free(f.cur);
  idmap_free(&f.written);
  free(f.written_ids);
  names_free(f.names);
  return rc;
}

void follow_print(const follow_stats *fs, FILE *f) {
  fprintf(f,
          "hoptrace: followed %" PRIu64 " snapshots: %" PRIu64 " events an earlier snapshot"
          " held skipped, %" PRIu64 " events of traces already written skipped (late), %" PRIu64
          " traces written before they settled (marked hoptrace.capture.settled)\n",
          fs->snapshots, fs->copies, fs->late, fs->unsettled);
  if (fs->remembered_full > 0)
    fprintf(f, "hoptrace: %" PRIu64 " events of a snapshot past the %zu remembered: their"
               " copies in the next snapshot were not skipped\n",
            fs->remembered_full, REMEMBER_MAX);
  if (fs->held_aged + fs->held_full > 0)
    fprintf(f, "hoptrace: uncaptured traces held for a later capture, dropped: %" PRIu64
               " after %d snapshots that added nothing to them, %" PRIu64 " past the bound"
               " (half of --max-open-traces and --max-open-spans); a capture reaching one"
               " later finds only what later snapshots hold\n",
            fs->held_aged, HOLD_SNAPSHOTS, fs->held_full);
}
