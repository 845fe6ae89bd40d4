/* The groups of traces `hoptrace diff` compares (diff_stats.h). */
#include <stdlib.h>

#include "diff/diff_stats.h"

static int view_new(const diff_set *s, diff_view *v) {
  v->set = s;
  v->n = 0;
  v->idx = malloc((s->n ? s->n : 1) * sizeof(*v->idx));
  return v->idx ? 0 : -1;
}

void diff_view_free(diff_view *v) {
  free(v->idx);
  v->idx = NULL;
  v->n = 0;
}

int diff_view_all(const diff_set *s, diff_view *v) {
  if (view_new(s, v) != 0)
    return -1;
  for (size_t i = 0; i < s->n; i++)
    v->idx[v->n++] = (uint32_t)i;
  return 0;
}

int diff_view_split_halves(const diff_set *s, diff_view *even, diff_view *odd) {
  if (view_new(s, even) != 0 || view_new(s, odd) != 0) {
    diff_view_free(even);
    return -1;
  }
  for (size_t i = 0; i < s->n; i++) {
    diff_view *v = s->traces[i].id_lo & 1 ? odd : even;
    v->idx[v->n++] = (uint32_t)i;
  }
  return 0;
}

typedef struct ranked {
  uint32_t op, idx;
  int64_t e2e_ns;
  double w;
} ranked;

static int by_op_then_e2e(const void *x, const void *y) {
  const ranked *a = x, *b = y;
  if (a->op != b->op)
    return a->op < b->op ? -1 : 1;
  if (a->e2e_ns != b->e2e_ns)
    return a->e2e_ns < b->e2e_ns ? -1 : 1;
  return (a->idx > b->idx) - (a->idx < b->idx);
}

int diff_view_split_tail(const diff_set *s, double q, diff_view *rest, diff_view *slow) {
  ranked *all = malloc((s->n ? s->n : 1) * sizeof(*all));
  if (all == NULL || view_new(s, rest) != 0 || view_new(s, slow) != 0) {
    free(all);
    diff_view_free(rest);
    return -1;
  }
  for (size_t i = 0; i < s->n; i++)
    all[i] = (ranked){s->traces[i].op, (uint32_t)i, s->traces[i].e2e_ns, s->traces[i].w};
  qsort(all, s->n, sizeof(*all), by_op_then_e2e);
  for (size_t from = 0, to; from < s->n; from = to) {
    double w = 0;
    for (to = from; to < s->n && all[to].op == all[from].op; to++)
      w += all[to].w;
    /* from the slowest down, until 1 - q of the weight is taken */
    double want = (1 - q) * w * (1 - 1e-9), taken = 0; /* 1 - 0.99 is 0.0100...09 */
    size_t cut = to;
    while (cut > from && (cut == to || taken < want)) {
      cut--;
      taken += all[cut].w;
    }
    /* equal times stay on one side */
    while (cut > from && all[cut - 1].e2e_ns == all[cut].e2e_ns)
      cut--;
    for (size_t i = from; i < to; i++) {
      diff_view *v = i >= cut ? slow : rest;
      v->idx[v->n++] = all[i].idx;
    }
  }
  free(all);
  return 0;
}
