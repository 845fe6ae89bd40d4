/* Lanes of the Chrome export (chrome_lanes.h). A lane keeps the spans
 * open at its latest start: a span fits if it starts at or after that
 * start and, when one is still open, the innermost is its ancestor and
 * ends no earlier. */
#include "output/chrome_lanes.h"

#include <stdlib.h>

#define LANE_DEPTH 32 /* nesting kept per lane; deeper goes to another lane */
#define ANCESTRY_MAX 64 /* parents looked at; a deeper one goes to another lane */
#define LINUX_TID_BITS 22

typedef struct open_span {
  int64_t end;
  uint64_t trace, id;
} open_span;

typedef struct lane {
  int64_t last_start;
  int depth;
  open_span open[LANE_DEPTH]; /* nested, outermost first */
} lane;

typedef struct thread_lanes {
  int n, cap;
  lane *lane;
} thread_lanes;

static int is_ancestor(const open_span *o, uint64_t trace, const span *s) {
  if (o->trace != trace)
    return 0;
  const span *p = s->parent;
  for (int i = 0; p != NULL && i < ANCESTRY_MAX; i++, p = p->parent)
    if (p->id == o->id)
      return 1;
  return 0;
}

/* Fits s in the lane, or returns 0 and leaves it as it was. */
static int fit(lane *ln, uint64_t trace, const span *s, int64_t start, int64_t end) {
  if (ln->depth > 0 && start < ln->last_start)
    return 0;
  int open = ln->depth; /* spans ending at or before start are closed */
  while (open > 0 && ln->open[open - 1].end <= start)
    open--;
  if (open == LANE_DEPTH ||
      (open > 0 && (end > ln->open[open - 1].end || !is_ancestor(&ln->open[open - 1], trace, s))))
    return 0;
  ln->open[open] = (open_span){end, trace, s->id};
  ln->depth = open + 1;
  ln->last_start = start;
  return 1;
}

static thread_lanes *thread_of(chrome_lanes *l, int64_t pid, int64_t tid) {
  thread_lanes *t = idmap_get(&l->threads, (uint64_t)pid, (uint64_t)tid);
  if (t != NULL)
    return t;
  t = calloc(1, sizeof(*t));
  if (t == NULL || idmap_put(&l->threads, (uint64_t)pid, (uint64_t)tid, t) != 0) {
    free(t);
    return NULL;
  }
  return t;
}

int chrome_lane_place(chrome_lanes *l, int64_t pid, int64_t tid, const span *s,
                      int64_t start, int64_t end) {
  thread_lanes *t = thread_of(l, pid, tid);
  if (t == NULL)
    return -1;
  for (int i = 0; i < t->n; i++)
    if (fit(&t->lane[i], l->trace, s, start, end))
      return i;
  if (t->n == CHROME_LANES_MAX) { /* the last lane restarts from this span */
    l->forced++;
    t->lane[t->n - 1].depth = 0;
    fit(&t->lane[t->n - 1], l->trace, s, start, end);
    return t->n - 1;
  }
  if (t->n == t->cap) {
    int cap = t->cap ? t->cap * 2 : 2;
    lane *grown = realloc(t->lane, (size_t)cap * sizeof(*grown));
    if (grown == NULL)
      return -1;
    t->lane = grown;
    t->cap = cap;
  }
  t->lane[t->n] = (lane){0};
  fit(&t->lane[t->n], l->trace, s, start, end);
  return t->n++;
}

int64_t chrome_lane_tid(int64_t tid, int lane) {
  if (lane == 0)
    return tid;
  return (tid & ((INT64_C(1) << LINUX_TID_BITS) - 1)) + ((int64_t)lane << LINUX_TID_BITS);
}

void chrome_lanes_free(chrome_lanes *l) {
  for (size_t i = 0; i < l->threads.cap; i++) {
    thread_lanes *t = l->threads.slots[i].value;
    if (t != NULL) { /* a removed slot's value is NULL */
      free(t->lane);
      free(t);
    }
  }
  idmap_free(&l->threads);
}
