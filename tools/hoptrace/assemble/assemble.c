/* Hop events -> traces. Open traces sit in a list ordered by their last
 * event, so each tick only looks at the quiet ones. Must never emit a
 * trace twice or keep one after emitting it. */
#include "assemble/assemble_internal.h"

#include <stdlib.h>

#include "assemble/capture.h"
#include "assemble/span_checks.h"
#include "read/limits.h"

assembler *assembler_new(trace_ready_fn ready, void *user, int64_t grace_ns,
                         int64_t timeout_ns) {
  assembler *a = calloc(1, sizeof(*a));
  if (a != NULL && (a->mem = span_mem_new()) == NULL) {
    free(a);
    return NULL;
  }
  if (a != NULL) {
    a->ready = ready;
    a->user = user;
    a->grace_ns = grace_ns > 0 ? grace_ns : 0;
    a->timeout_ns = timeout_ns > grace_ns ? timeout_ns : grace_ns;
  }
  return a;
}

static void unlink_open(assembler *a, open_trace *o) {
  if (o->prev) o->prev->next = o->next; else a->oldest = o->next;
  if (o->next) o->next->prev = o->prev; else a->newest = o->prev;
  o->prev = o->next = NULL;
}

static void append_open(assembler *a, open_trace *o) {
  o->prev = a->newest;
  o->next = NULL;
  if (a->newest) a->newest->next = o; else a->oldest = o;
  a->newest = o;
}

/* Hands t out unless the keep function declines it; true when it did. */
static bool emit(assembler *a, open_trace *o, int timed_out) {
  trace *t = o->t;
  unlink_open(a, o);
  idmap_remove(&a->traces, t->trace_hi, t->trace_lo);
  t->timed_out = timed_out;
  bool handed_out = false, written = false;
  int resolved = assembler_resolve(a, t);
  if (resolved == 0 && a->keep_fn != NULL && !a->keep_fn(a->keep_user, t)) {
    a->stats.declined_traces++;
  } else if (resolved == 0) {
    if (t->capture != NULL) {
      a->stats.captured_traces++;
      a->stats.captured_complete += !t->incomplete;
      a->stats.captured_partial += t->incomplete;
    }
    a->stats.traces++;
    a->stats.spans += t->n_spans;
    a->stats.orphan_spans += t->orphans;
    a->stats.unfinished_spans += t->unfinished;
    a->stats.incomplete_traces += t->incomplete;
    a->stats.lossy_traces += t->lossy;
    a->stats.missing_spans += t->missing_spans;
    a->stats.timed_out_traces += (uint64_t)timed_out;
    a->stats.invalid_prob_traces += trace_root_prob_invalid(t);
    a->stats.duplicate_id_spans += t->duplicate_ids;
    a->stats.backwards_spans += t->backwards;
    a->stats.malformed_traces += t->malformed_events > 0;
    a->stats.malformed_events += t->malformed_events;
    a->stats.unreceived_traces += t->unreceived > 0;
    if (a->emitted != NULL)
      a->emitted(a->emitted_user, t);
    a->ready(a->user, t);
    handed_out = a->keep;
    written = true;
  }
  if (t->spans_indexed)
    for (size_t i = 0; i < t->n_spans; i++)
      idmap_remove(&a->spans, (uint64_t)(uintptr_t)t, t->spans[i]->id);
  a->open_spans -= t->n_spans;
  if (!handed_out)
    trace_free(a->mem, t);
  free(o);
  a->open--;
  return written;
}

static open_trace *open_trace_for(assembler *a, const hop_event *ev) {
  open_trace *o = idmap_get(&a->traces, ev->trace_hi, ev->trace_lo);
  if (o != NULL)
    return o;
  o = calloc(1, sizeof(*o));
  trace *t = trace_new(a->mem, ev->trace_hi, ev->trace_lo);
  if (o == NULL || t == NULL || idmap_put(&a->traces, ev->trace_hi, ev->trace_lo, o) != 0) {
    free(o);
    trace_free(a->mem, t);
    return NULL;
  }
  o->t = t;
  o->born = a->stamp;
  t->first_ns = ev->ts_ns;
  append_open(a, o);
  if (++a->open > a->stats.open_traces_peak)
    a->stats.open_traces_peak = a->open;
  return o;
}

/* Keeps a span whose id another span of t already has apart from it:
 * both flagged, counted once each; later events of that id go to the
 * newest (find_span finds the last one added). */
static span *add_duplicate(assembler *a, trace *t, span *first, const hop_event *ev) {
  static const char why[] = "kept apart";
  if (!span_has_tag(first, SPAN_ID_DUPLICATE_KEY)) {
    if (span_add_tag(a->mem, t, first, SPAN_ID_DUPLICATE_KEY, false, 0, why) != 0)
      return NULL;
    t->duplicate_ids++;
  }
  span *s = trace_add_span(a->mem, t, ev->span_id, ev->parent_id);
  if (s == NULL || assembler_index_span(a, t, s) != 0 ||
      span_add_tag(a->mem, t, s, SPAN_ID_DUPLICATE_KEY, false, 0, why) != 0)
    return NULL;
  t->duplicate_ids++;
  return s;
}

/* Too many traces or spans open: the oldest (least recently active) are
 * written before their grace, complete ones as they are, the others
 * marked incomplete; never o, the trace an event is being added to.
 * Counted only when written: one the keep function declines (an
 * uncaptured trace of flight snapshots) was not written early. */
static void write_early(assembler *a, const open_trace *o) {
  while ((a->open > ht_limits.open_traces || a->open_spans > ht_limits.open_spans) &&
         a->oldest != NULL && a->oldest != o) {
    bool complete = assembler_is_complete(a, a->oldest->t);
    a->oldest->t->written_early = true;
    if (emit(a, a->oldest, !complete)) {
      ht_drops.early_traces++;
      ht_drops.early_incomplete += !complete;
    }
  }
}

int assembler_add(assembler *a, const hop_event *ev) {
  open_trace *o = open_trace_for(a, ev);
  if (o == NULL)
    return -1;
  write_early(a, o);
  trace *t = o->t;
  o->touched = a->stamp;
  if (ev->ts_ns > t->last_ns)
    t->last_ns = ev->ts_ns;
  if (ev->ts_ns > a->now_ns)
    a->now_ns = ev->ts_ns;
  if (a->added++ == 0 || ev->ts_ns > a->events_ns)
    a->events_ns = ev->ts_ns;
  if (a->newest != o) { /* most recently active goes last */
    unlink_open(a, o);
    append_open(a, o);
  }
  if (ev->kind == HOP_CAPTURE)
    return capture_add(a->mem, &a->stats, t, ev);
  if (ev->kind == HOP_MALFORMED) {
    t->malformed_events += t->malformed_events < UINT32_MAX;
    return 0;
  }
  span *s = assembler_find_span(a, t, ev->span_id);
  size_t n_spans = t->n_spans;
  if ((s == NULL || span_starts_again(s, ev)) && n_spans >= ht_limits.trace_spans) {
    ht_drops.trace_spans++; /* the trace's spans so far stay */
    t->dropped_spans++;
    return 0;
  }
  if (s == NULL) {
    s = trace_add_span(a->mem, t, ev->span_id, ev->parent_id);
    if (s == NULL || assembler_index_span(a, t, s) != 0)
      return -1;
  } else if (span_starts_again(s, ev) && (s = add_duplicate(a, t, s, ev)) == NULL) {
    return -1;
  }
  if (t->n_spans > n_spans && (a->open_spans += t->n_spans - n_spans) > ht_limits.open_spans)
    write_early(a, o);
  t->last_span = s;
  int rc = span_apply_event(a->mem, t, s, ev);
  /* not started (yet): start_ns keeps the earliest time of its events, so
   * a span never started is not shown at 0 (model.h span_shown_start_ns) */
  if (!s->started && (s->start_ns == 0 || ev->ts_ns < s->start_ns))
    s->start_ns = ev->ts_ns;
  if (a->n_losses > 0 && !t->lossy) /* only once a host lost events */
    assembler_mark_late_loss(a, t, s);
  return rc;
}

/* last_ns + d <= now without overflow: timestamps are whatever int64 a
 * CTF clock gives (a corrupt trace can sit next to the limits); d >= 0. */
static bool quiet_for(int64_t last_ns, int64_t d, int64_t now_ns) {
  return last_ns <= now_ns && (uint64_t)now_ns - (uint64_t)last_ns >= (uint64_t)d;
}

void assembler_tick(assembler *a, int64_t now_ns) {
  if (now_ns > a->now_ns)
    a->now_ns = now_ns;
  open_trace *o = a->oldest;
  while (o != NULL && quiet_for(o->t->last_ns, a->grace_ns, a->now_ns)) {
    open_trace *next = o->next;
    if (assembler_is_complete(a, o->t))
      emit(a, o, 0);
    else if (quiet_for(o->t->last_ns, a->timeout_ns, a->now_ns))
      emit(a, o, 1);
    o = next;
  }
}

/* Live and idle, the trace's time runs on from the latest event's at the
 * monotonic clock's pace: the wall clock is not the session's (a host's
 * clock may be hours off this machine's: ticking at the wall time closed
 * such a host's traces at once, or never). The anchor is taken at the
 * first idle call after events arrived (that is, within one read of the
 * last of them); events arriving again take a new anchor, so a live
 * stream that lags (the relay hands out packets in bursts) never runs
 * the idle time ahead of it for longer than it stays quiet. */
void assembler_idle(assembler *a, int64_t mono_ns) {
  if (a->added == 0)
    return; /* no event yet: no trace time to run on from */
  if (!a->idle_anchored || a->added != a->idle_added) {
    a->idle_anchored = true;
    a->idle_added = a->added;
    a->idle_mono_ns = mono_ns;
    return;
  }
  int64_t idle = mono_ns > a->idle_mono_ns ? mono_ns - a->idle_mono_ns : 0;
  int64_t now = a->events_ns > INT64_MAX - idle ? INT64_MAX : a->events_ns + idle;
  assembler_tick(a, now);
}

void assembler_set_stamp(assembler *a, int64_t stamp) { a->stamp = stamp; }

bool assembler_open_born(const assembler *a, uint64_t hi, uint64_t lo, int64_t *born) {
  const open_trace *o = idmap_get(&a->traces, hi, lo);
  if (o != NULL)
    *born = o->born;
  return o != NULL;
}

void assembler_emit_if(assembler *a, trace_pick_fn pick, void *user) {
  for (open_trace *o = a->oldest, *next; o != NULL; o = next) {
    next = o->next;
    if (pick(user, o->t, o->touched))
      emit(a, o, !assembler_is_complete(a, o->t));
  }
}

void assembler_flush(assembler *a) {
  while (a->oldest != NULL)
    emit(a, a->oldest, !assembler_is_complete(a, a->oldest->t));
}

void assembler_free(assembler *a) {
  if (a == NULL)
    return;
  while (a->oldest != NULL) {
    open_trace *o = a->oldest;
    unlink_open(a, o);
    trace_free(a->mem, o->t);
    free(o);
  }
  for (size_t i = 0; i < a->n_losses; i++)
    free(a->losses[i].host);
  free(a->losses);
  idmap_free(&a->traces);
  idmap_free(&a->spans);
  span_mem_free(a->mem);
  free(a);
}

const assembler_stats *assembler_get_stats(const assembler *a) { return &a->stats; }

int64_t assembler_now(const assembler *a) { return a->now_ns; }

void assembler_keep_traces(assembler *a) { a->keep = true; }

void assembler_release(assembler *a, trace *t) { trace_free(a->mem, t); }

void assembler_set_keep(assembler *a, trace_keep_fn keep, void *user) {
  a->keep_fn = keep;
  a->keep_user = user;
}

void assembler_set_emitted(assembler *a, trace_emitted_fn emitted, void *user) {
  a->emitted = emitted;
  a->emitted_user = user;
}

void assembler_set_check(assembler *a, trace_check_fn check, void *user) {
  a->check = check;
  a->check_user = user;
}
