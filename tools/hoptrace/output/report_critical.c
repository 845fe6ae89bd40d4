/* The critical path of one trace (report_critical.h). */
#include "output/report_critical.h"

#include <stdlib.h>

#include "output/report_groups.h"
#include "read/event.h"

const char *const cp_phase_names[CP_PHASES] = {
    "client queue", "request net+queue", "service self time", "waiting on a child",
    "reply net+queue"};

/* A child clamped into its parent's window on the path. */
typedef struct child {
  const span *s;
  int64_t lo, hi;
} child;

typedef struct walk {
  const cp_visitor *v;
  cp_stats *stats;
  child *stack;
  size_t top, cap;
} walk;

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static int64_t span_end(const span *s) {
  int64_t start = span_shown_start_ns(s), d = span_duration_ns(s);
  return start > 0 && d > INT64_MAX - start ? INT64_MAX : start + d;
}

/* The part of [a, b) inside [x, y). */
static int64_t overlap(int64_t a, int64_t b, int64_t x, int64_t y) {
  int64_t lo = max64(a, x), hi = min64(b, y);
  return hi > lo ? ns_diff(hi, lo) : 0;
}

static void emit(walk *w, const span *s, const span *server, int phase, int64_t ns) {
  if (ns > 0)
    w->v->segment(w->v->user, s, server, phase, ns);
}

/* The server span a client span called: of its server children, the one
 * that ends last. */
static const span *server_of(const span *c) {
  const span *best = NULL;
  for (size_t i = 0; i < c->n_children; i++) {
    const span *k = c->children[i];
    if (k->kind == HOP_KIND_SERVER && (best == NULL || span_end(k) > span_end(best)))
      best = k;
  }
  return best;
}

/* s's own time [a, b) on the path, by phase. */
static void own(walk *w, const span *s, int64_t a, int64_t b) {
  if (b <= a)
    return;
  if (s->kind != HOP_KIND_CLIENT) {
    emit(w, s, NULL, CP_SERVICE, ns_diff(b, a));
    return;
  }
  int64_t cs = report_mark(s, "cs", 0), cr = report_mark(s, "cr", 1);
  if (cr < cs)
    cr = cs;
  emit(w, s, NULL, CP_CLIENT_QUEUE, overlap(a, b, INT64_MIN, cs) + overlap(a, b, cr, INT64_MAX));
  const span *srv = server_of(s);
  if (srv == NULL) {
    emit(w, s, NULL, CP_WAIT_CHILD, overlap(a, b, cs, cr));
    return;
  }
  /* the server's marks inside cs..cr: a clock that puts them outside
   * leaves the rest to the nearer network phase */
  int64_t sr = min64(max64(report_mark(srv, "sr", 0), cs), cr);
  int64_t ss = min64(max64(report_mark(srv, "ss", 1), sr), cr);
  emit(w, s, srv, CP_REQUEST, overlap(a, b, cs, sr));
  emit(w, s, NULL, CP_WAIT_CHILD, overlap(a, b, sr, ss));
  emit(w, s, srv, CP_REPLY, overlap(a, b, ss, cr));
}

static int by_end_desc(const void *a, const void *b) {
  const child *x = a, *y = b;
  if (x->hi != y->hi)
    return x->hi > y->hi ? -1 : 1;
  return (x->lo > y->lo) - (x->lo < y->lo); /* the longer first */
}

static void visit(walk *w, const span *s, int depth, int64_t lo, int64_t hi) {
  if (w->v->span != NULL)
    w->v->span(w->v->user, s, depth, lo, hi);
  if (depth >= CP_DEPTH_MAX && s->n_children > 0) {
    w->stats->too_deep++;
    own(w, s, lo, hi);
    return;
  }
  size_t base = w->top;
  for (size_t i = 0; i < s->n_children && w->top < w->cap; i++) {
    const span *k = s->children[i];
    int64_t start = span_shown_start_ns(k), end = span_end(k);
    if (start < lo || end > hi) {
      w->stats->clamped++;
      w->stats->clamped_ns =
          ns_sum(w->stats->clamped_ns,
                 ns_sum(start < lo ? ns_diff(min64(lo, end), start) : 0,
                        end > hi ? ns_diff(end, max64(hi, start)) : 0));
    }
    child c = {k, max64(start, lo), min64(end, hi)};
    if (c.hi > c.lo)
      w->stack[w->top++] = c;
  }
  size_t n = w->top - base;
  qsort(w->stack + base, n, sizeof(child), by_end_desc);
  int64_t cursor = hi;
  for (size_t i = 0; i < n; i++) {
    child c = w->stack[base + i];
    if (c.hi > cursor) /* ran beside the one after it: not on the path */
      continue;
    own(w, s, c.hi, cursor);
    visit(w, c.s, depth + 1, c.lo, c.hi);
    cursor = c.lo;
  }
  own(w, s, lo, cursor);
  w->top = base;
}

const span *cp_root(const trace *t) {
  const span *s = NULL;
  for (size_t i = 0; i < t->n_roots; i++)
    if (s == NULL || span_duration_ns(t->roots[i]) > span_duration_ns(s))
      s = t->roots[i];
  return s;
}

int cp_walk(const trace *t, const cp_visitor *v, cp_stats *stats, cp_scratch *scratch) {
  const span *root = cp_root(t);
  if (root == NULL)
    return 0;
  if (scratch->cap < t->n_spans) {
    child *grown = realloc(scratch->buf, t->n_spans * sizeof(child));
    if (grown == NULL)
      return -1;
    scratch->buf = grown;
    scratch->cap = t->n_spans;
  }
  walk w = {v, stats, scratch->buf, 0, scratch->cap};
  int64_t start = span_shown_start_ns(root);
  visit(&w, root, 0, start, span_end(root));
  return 0;
}

void cp_scratch_free(cp_scratch *s) {
  free(s->buf);
  s->buf = NULL;
  s->cap = 0;
}
