/* Hop events -> traces. Open traces sit in a list ordered by their last
 * event, so each tick only looks at the quiet ones. Must never emit a
 * trace twice or keep one after emitting it. */
#include "assemble/assemble.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/idmap.h"
#include "assemble/span_checks.h"
#include "assemble/span_store.h"
#include "assemble/trace_limits.h"
#include "read/limits.h"

/* Traces up to this many spans are searched linearly (cache friendly);
 * bigger ones are also indexed in the assembler's span map. */
#define LINEAR_SPANS 32

/* Hosts whose latest loss is remembered (assembler_discarded): past
 * this many, a new host's loss marks only the traces open at the time. */
#define MAX_LOSS_HOSTS 1024

/* A host whose stream lost events, and when its latest loss ended. */
typedef struct host_loss {
  char *host;
  int64_t end_ns;
} host_loss;

typedef struct open_trace {
  trace *t;
  int64_t born, touched; /* the stamps when it opened, when last added to */
  struct open_trace *prev, *next; /* by last activity, oldest first */
} open_trace;

struct assembler {
  trace_ready_fn ready;
  void *user;
  trace_check_fn check; /* NULL: none */
  void *check_user;
  trace_keep_fn keep_fn; /* NULL: every trace */
  void *keep_user;
  trace_emitted_fn emitted; /* NULL: none */
  void *emitted_user;
  int64_t grace_ns, timeout_ns;
  idmap traces; /* (hi, lo) -> open_trace */
  idmap spans;  /* (trace address, span id) -> span, big traces only */
  span_mem *mem;
  open_trace *oldest, *newest;
  size_t open;
  uint64_t open_spans; /* spans of the open traces */
  bool keep; /* emitted traces are freed by assembler_release */
  int64_t now_ns;
  int64_t stamp; /* assembler_set_stamp */
  /* events added, the latest event time; live idle time (assembler_idle):
   * its monotonic anchor and the events added when it was taken */
  uint64_t added, idle_added;
  int64_t events_ns, idle_mono_ns;
  bool idle_anchored;
  host_loss *losses; /* hosts that lost events, NULL: none so far */
  size_t n_losses, cap_losses;
  assembler_stats stats;
};

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

static span *find_span(const assembler *a, const trace *t, uint64_t id) {
  if (t->last_span != NULL && t->last_span->id == id)
    return t->last_span;
  if (t->spans_indexed)
    return idmap_get(&a->spans, (uint64_t)(uintptr_t)t, id);
  for (size_t i = t->n_spans; i > 0; i--)
    if (t->spans[i - 1]->id == id)
      return t->spans[i - 1];
  return NULL;
}

static int index_span(assembler *a, trace *t, span *s) {
  if (!t->spans_indexed && t->n_spans > LINEAR_SPANS) {
    for (size_t i = 0; i < t->n_spans; i++)
      if (idmap_put(&a->spans, (uint64_t)(uintptr_t)t, t->spans[i]->id, t->spans[i]) != 0)
        return -1;
    t->spans_indexed = true;
    return 0;
  }
  if (t->spans_indexed)
    return idmap_put(&a->spans, (uint64_t)(uintptr_t)t, s->id, s);
  return 0;
}

static int is_complete(const assembler *a, const trace *t) {
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    if (!s->started || !s->ended)
      return 0;
    if (s->parent_id != 0 && find_span(a, t, s->parent_id) == NULL)
      return 0;
  }
  return 1;
}

const char *capture_reason(uint8_t why) {
  switch (why) {
  case HOP_CAPTURE_SLOW_CLIENT: return "slow-client";
  case HOP_CAPTURE_ERROR: return "error";
  case HOP_CAPTURE_SLOW_SERVER: return "slow-server";
  case HOP_CAPTURE_MANUAL: return "manual";
  case HOP_CAPTURE_NOTICE: return "notice";
  default: return "unknown";
  }
}

/* A capture event: the trace's, never a span (its span id names the span
 * that fired, 0 by hand). */
static int add_capture(assembler *a, trace *t, const hop_event *ev) {
  capture_info *c = t->capture;
  if (c == NULL) {
    if ((c = trace_alloc(a->mem, t, sizeof(*c))) == NULL)
      return -1;
    memset(c, 0, sizeof(*c));
    t->capture = c;
  }
  c->events++;
  const char *host = trace_str(a->mem, t, ev->hostname);
  if (host == NULL)
    return -1;
  int32_t pid = ev->vpid < 0 ? -1 : ev->vpid > INT32_MAX ? INT32_MAX : (int32_t)ev->vpid;
  if (ev->capture_hops == 0 && ev->capture_why != HOP_CAPTURE_NOTICE) {
    c->triggers++;
    a->stats.triggers[ev->capture_why < HOP_CAPTURE_WHY_MAX ? ev->capture_why : 0]++;
    if (c->triggers == 1) { /* the first trigger is why it was captured */
      c->why = ev->capture_why;
      c->threshold = ev->capture_threshold;
      c->value = ev->capture_value;
      c->host = host;
      c->pid = pid;
      if ((c->origin = trace_str(a->mem, t, ev->service)) == NULL)
        return -1;
    }
    return 0;
  }
  a->stats.notices++;
  for (uint32_t i = 0; i < c->n_procs; i++)
    if (c->procs[i].pid == pid && strcmp(c->procs[i].host, host) == 0)
      return 0;
  c->answered++;
  if (c->n_procs < CAPTURE_MAX_PROCS)
    c->procs[c->n_procs++] = (capture_proc){host, pid, false};
  return 0;
}

static bool same_process(const span *s, const char *host, int32_t pid) {
  return s->vpid == pid && strcmp(s->hostname != NULL ? s->hostname : "", host) == 0;
}

static bool has_server_child(const span *s) {
  for (uint32_t i = 0; i < s->n_children; i++)
    if (s->children[i]->kind == HOP_KIND_SERVER)
      return true;
  return false;
}

bool capture_partial(const trace *t) {
  const capture_info *c = t->capture;
  return c != NULL && (t->n_spans == 0 || c->procs_gone > 0 || c->servers_gone > 0);
}

static int tag_root(assembler *a, trace *t, span *root) {
  const capture_info *c = t->capture;
  char text[320];
  if (span_add_tag(a->mem, t, root, "hoptrace.capture.reason", false, 0,
                   c->triggers > 0 ? capture_reason(c->why)
                                   : "unknown: only capture notices, the process that fired"
                                     " is not in the input") != 0)
    return -1;
  if (c->triggers > 0 && (c->why == HOP_CAPTURE_SLOW_CLIENT || c->why == HOP_CAPTURE_SLOW_SERVER)) {
    snprintf(text, sizeof(text), "%.3f", (double)c->threshold / 1e6);
    if (span_add_tag(a->mem, t, root, "hoptrace.capture.threshold_ms", false, 0, text) != 0)
      return -1;
    snprintf(text, sizeof(text), "%.3f", (double)c->value / 1e6);
    if (span_add_tag(a->mem, t, root, "hoptrace.capture.value_ms", false, 0, text) != 0)
      return -1;
  }
  if (c->triggers > 0 && c->why == HOP_CAPTURE_ERROR &&
      span_add_tag(a->mem, t, root, "hoptrace.capture.status", true,
                   (int64_t)(int32_t)(uint32_t)c->value, NULL) != 0)
    return -1;
  if (c->triggers > 0) {
    snprintf(text, sizeof(text), "%s (host %s, pid %" PRId32 ")",
             c->origin[0] ? c->origin : "?", c->host[0] ? c->host : "?", c->pid);
    if (span_add_tag(a->mem, t, root, "hoptrace.capture.by", false, 0, text) != 0)
      return -1;
  }
  if (t->unsettled &&
      span_add_tag(a->mem, t, root, "hoptrace.capture.settled", false, 0,
                   "no: written when the follower stopped, before its settle time") != 0)
    return -1;
  return span_add_tag(a->mem, t, root, "hoptrace.capture.hosts", true, c->answered, NULL);
}

/* A captured trace at emission: which processes the notice reached hold
 * none of its spans (their rings overwrote them before the notice came),
 * which answered calls have no server span; the root tagged with why. */
static int settle_capture(assembler *a, trace *t) {
  capture_info *c = t->capture;
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    for (uint32_t k = 0; k < c->n_procs; k++)
      if (!c->procs[k].has_spans && same_process(s, c->procs[k].host, c->procs[k].pid))
        c->procs[k].has_spans = true;
    /* host_health's check names the host when it knows the address: the
     * same gap is not counted twice */
    if (t->missing_spans == 0 && s->kind == HOP_KIND_CLIENT && s->ended &&
        span_reached_server(s) && span_annotation_ns(s, "cr") != 0 && !has_server_child(s) &&
        c->servers_gone++ == 0)
      c->servers_gone_peer = s->peer != NULL ? s->peer : "";
  }
  for (uint32_t k = 0; k < c->n_procs; k++)
    if (!c->procs[k].has_spans && c->procs_gone++ == 0) {
      c->gone_host = c->procs[k].host;
      c->gone_pid = c->procs[k].pid;
    }
  span *root = NULL;
  for (size_t i = 0; i < t->n_roots && root == NULL; i++)
    if (t->roots[i]->parent_id == 0)
      root = t->roots[i];
  if (root == NULL && t->n_roots > 0)
    root = t->roots[0];
  return root != NULL ? tag_root(a, t, root) : 0;
}

/* Links parents and children; counts what is missing. A span in a parent
 * cycle is cut loose and counted as an orphan, so it still shows up. */
static int resolve(assembler *a, trace *t) {
  t->roots = trace_alloc(a->mem, t, (t->n_spans ? t->n_spans : 1) * sizeof(span *));
  if (t->roots == NULL)
    return -1;
  for (size_t i = 0; i < t->n_spans; i++) {
    span *s = t->spans[i];
    s->parent = s->parent_id ? find_span(a, t, s->parent_id) : NULL;
  }
  span_cut_cycles(t);
  for (size_t i = 0; i < t->n_spans; i++) {
    span *s = t->spans[i];
    if (!s->started || !s->ended)
      t->unfinished++;
    else if (s->end_ns < s->start_ns && span_flag_backwards(a->mem, t, s) != 0)
      return -1;
    if (s->parent_id != 0 && s->parent == NULL) {
      s->orphan = true;
      t->orphans++;
    }
    if (s->parent == NULL)
      t->roots[t->n_roots++] = s;
    else
      s->parent->n_children++; /* counted first, filled below */
  }
  for (size_t i = 0; i < t->n_spans; i++) {
    span *s = t->spans[i];
    if (s->n_children > 0) {
      s->children = trace_alloc(a->mem, t, s->n_children * sizeof(span *));
      if (s->children == NULL)
        return -1;
      s->n_children = 0;
    }
  }
  for (size_t i = 0; i < t->n_spans; i++)
    if (t->spans[i]->parent != NULL) {
      span *p = t->spans[i]->parent;
      p->children[p->n_children++] = t->spans[i];
    }
  if (a->check != NULL)
    a->check(a->check_user, t);
  if (t->capture != NULL && settle_capture(a, t) != 0)
    return -1;
  t->incomplete = t->unfinished || t->orphans || t->lossy || t->timed_out || t->missing_spans ||
                  t->dropped_spans || t->malformed_events || t->unreceived ||
                  (t->capture != NULL && capture_partial(t));
  return trace_limit_tags(a->mem, t);
}

static void emit(assembler *a, open_trace *o, int timed_out) {
  trace *t = o->t;
  unlink_open(a, o);
  idmap_remove(&a->traces, t->trace_hi, t->trace_lo);
  t->timed_out = timed_out;
  bool handed_out = false;
  int resolved = resolve(a, t);
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
  }
  if (t->spans_indexed)
    for (size_t i = 0; i < t->n_spans; i++)
      idmap_remove(&a->spans, (uint64_t)(uintptr_t)t, t->spans[i]->id);
  a->open_spans -= t->n_spans;
  if (!handed_out)
    trace_free(a->mem, t);
  free(o);
  a->open--;
}

/* The first span of t recorded on host, NULL when none. */
static const span *span_on_host(const trace *t, const char *host) {
  for (size_t i = 0; i < t->n_spans; i++)
    if (t->spans[i]->hostname != NULL && strcmp(t->spans[i]->hostname, host) == 0)
      return t->spans[i];
  return NULL;
}

static void mark_lossy(trace *t, const char *host) {
  t->lossy = true;
  t->lossy_host = host; /* a span's name: lives as long as t */
}

/* Remembers when host's latest loss ended, for the span sides of that
 * host that arrive after it (mark_late_loss). */
static void remember_loss(assembler *a, const char *host, int64_t end_ns) {
  for (size_t i = 0; i < a->n_losses; i++)
    if (strcmp(a->losses[i].host, host) == 0) {
      if (end_ns > a->losses[i].end_ns)
        a->losses[i].end_ns = end_ns;
      return;
    }
  if (a->n_losses == MAX_LOSS_HOSTS)
    return;
  if (a->n_losses == a->cap_losses) {
    size_t cap = a->cap_losses ? 2 * a->cap_losses : 4;
    host_loss *grown = realloc(a->losses, cap * sizeof(*grown));
    if (grown == NULL)
      return;
    a->losses = grown;
    a->cap_losses = cap;
  }
  char *copy = strdup(host);
  if (copy != NULL)
    a->losses[a->n_losses++] = (host_loss){copy, end_ns};
}

/* A span of a host that lost events, running when the loss ended, whose
 * event arrives after the loss (a span side is written at the span's
 * end): events of its trace on that host may be among those lost. */
static void mark_late_loss(assembler *a, trace *t, const span *s) {
  if (s->hostname == NULL || !s->started)
    return;
  for (size_t i = 0; i < a->n_losses; i++)
    if (s->start_ns <= a->losses[i].end_ns && strcmp(a->losses[i].host, s->hostname) == 0) {
      mark_lossy(t, s->hostname);
      return;
    }
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
  if (s == NULL || index_span(a, t, s) != 0 ||
      span_add_tag(a->mem, t, s, SPAN_ID_DUPLICATE_KEY, false, 0, why) != 0)
    return NULL;
  t->duplicate_ids++;
  return s;
}

/* Too many traces or spans open: the oldest (least recently active) are
 * written before their grace, complete ones as they are, the others
 * marked incomplete; never o, the trace an event is being added to. */
static void write_early(assembler *a, const open_trace *o) {
  while ((a->open > ht_limits.open_traces || a->open_spans > ht_limits.open_spans) &&
         a->oldest != NULL && a->oldest != o) {
    bool complete = is_complete(a, a->oldest->t);
    a->oldest->t->written_early = true;
    ht_drops.early_traces++;
    ht_drops.early_incomplete += !complete;
    emit(a, a->oldest, !complete);
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
    return add_capture(a, t, ev);
  if (ev->kind == HOP_MALFORMED) {
    t->malformed_events += t->malformed_events < UINT32_MAX;
    return 0;
  }
  span *s = find_span(a, t, ev->span_id);
  size_t n_spans = t->n_spans;
  if ((s == NULL || span_starts_again(s, ev)) && n_spans >= ht_limits.trace_spans) {
    ht_drops.trace_spans++; /* the trace's spans so far stay */
    t->dropped_spans++;
    return 0;
  }
  if (s == NULL) {
    s = trace_add_span(a->mem, t, ev->span_id, ev->parent_id);
    if (s == NULL || index_span(a, t, s) != 0)
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
    mark_late_loss(a, t, s);
  return rc;
}

void assembler_discarded(assembler *a, const hop_loss *loss) {
  const char *host = loss->hostname != NULL && loss->hostname[0] != '\0' ? loss->hostname : NULL;
  int64_t end_ns = loss->end_ns;
  /* An open trace that began before the loss ended may have lost events
   * of that host's stream when it holds a span of that host; every open
   * trace when the stream names no host. */
  for (open_trace *o = a->oldest; o != NULL; o = o->next) {
    trace *t = o->t;
    if (t->lossy || (end_ns != 0 && t->first_ns > end_ns))
      continue;
    const span *s;
    if (host == NULL)
      t->lossy = true;
    else if ((s = span_on_host(t, host)) != NULL)
      mark_lossy(t, s->hostname);
  }
  if (host != NULL) /* lost packets have no times: the loss ended by now */
    remember_loss(a, host, end_ns != 0 ? end_ns : a->now_ns);
}

static void mark_unreceived(trace *t, const char *host, bool unchecked, int64_t last_ns) {
  if (t->unreceived++ == 0) {
    t->unreceived_host = host;
    t->end_unchecked = unchecked;
    t->end_last_ns = last_ns;
  }
}

void assembler_unreceived(assembler *a, const hop_event *ev, const char *host) {
  open_trace *o = idmap_get(&a->traces, ev->trace_hi, ev->trace_lo);
  if (o != NULL && (ev->trace_hi != 0 || ev->trace_lo != 0))
    mark_unreceived(o->t, host, false, 0);
}

uint64_t assembler_end_host(assembler *a, const char *host, bool unchecked, int64_t last_ns) {
  uint64_t marked = 0;
  for (open_trace *o = a->oldest; o != NULL; o = o->next)
    if (o->t->unreceived == 0 && span_on_host(o->t, host) != NULL) {
      mark_unreceived(o->t, host, unchecked, last_ns);
      marked++;
    }
  return marked;
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
    if (is_complete(a, o->t))
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
      emit(a, o, !is_complete(a, o->t));
  }
}

void assembler_flush(assembler *a) {
  while (a->oldest != NULL)
    emit(a, a->oldest, !is_complete(a, a->oldest->t));
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
