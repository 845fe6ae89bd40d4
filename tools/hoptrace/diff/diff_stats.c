/* `hoptrace diff`'s figures (diff_stats.h). */
#include "diff/diff_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_boot.h"
#include "output/report_groups.h"

/* A sample: a key's ns on one trace's path (key < DIFF_KEYS), or an
 * operation's end-to-end ns (DIFF_KEYS + op). */
typedef struct sample {
  uint32_t key;
  int32_t cls;
  double w, ns;
} sample;

#define E2E DIFF_KEYS
#define IDS (DIFF_KEYS + DIFF_OPS)

typedef struct side {
  sample *s;
  size_t n;
  size_t from[IDS], to[IDS]; /* each id's samples */
} side;

static int by_key_then_class(const void *x, const void *y) {
  const sample *a = x, *b = y;
  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  return (a->cls > b->cls) - (a->cls < b->cls);
}

static int side_build(const diff_view *v, side *sd) {
  size_t n = v->n;
  for (size_t i = 0; i < v->n; i++)
    n += v->set->traces[v->idx[i]].n_cells;
  sd->s = malloc((n ? n : 1) * sizeof(sample));
  if (sd->s == NULL)
    return -1;
  sd->n = 0;
  for (size_t i = 0; i < v->n; i++) {
    const diff_trace *t = &v->set->traces[v->idx[i]];
    sd->s[sd->n++] = (sample){E2E + t->op, boot_class(t->e2e_ns), t->w, (double)t->e2e_ns};
    for (uint32_t c = 0; c < t->n_cells; c++) {
      const diff_cell *x = &v->set->cells[t->first_cell + c];
      sd->s[sd->n++] = (sample){x->key, boot_class(x->ns), t->w, (double)x->ns};
    }
  }
  qsort(sd->s, sd->n, sizeof(sample), by_key_then_class);
  memset(sd->from, 0, sizeof(sd->from));
  memset(sd->to, 0, sizeof(sd->to));
  for (size_t i = 0; i < sd->n; i++) {
    uint32_t k = sd->s[i].key;
    if (i == 0 || sd->s[i - 1].key != k)
      sd->from[k] = i;
    sd->to[k] = i + 1;
  }
  return 0;
}

/* An id's samples as classes; its weighted sum of ns in *sum. */
static size_t bins_of(const side *sd, uint32_t id, boot_bin *out, double *sum, uint64_t *n) {
  size_t nb = 0;
  *sum = 0;
  *n = sd->to[id] - sd->from[id];
  for (size_t i = sd->from[id]; i < sd->to[id]; i++) {
    const sample *x = &sd->s[i];
    *sum += x->w * x->ns;
    if (nb == 0 || out[nb - 1].cls != x->cls)
      out[nb++] = (boot_bin){x->cls, 0, 0};
    out[nb - 1].w += x->w;
    out[nb - 1].n++;
  }
  return nb;
}

typedef struct work {
  side a, b;
  boot_bin *bins_a, *bins_b;
  boot_scratch boot;
  unsigned resamples;
  uint64_t seed;
} work;

/* Fills r's quantiles and contribution for id; w_a, w_b: the
 * operation's weight a side. */
static int row_fill(work *wk, uint32_t id, uint64_t salt, double w_a, double w_b,
                    diff_row *r) {
  double sum_a, sum_b;
  size_t na = bins_of(&wk->a, id, wk->bins_a, &sum_a, &r->n_a);
  size_t nb = bins_of(&wk->b, id, wk->bins_b, &sum_b, &r->n_b);
  r->contrib_ns = (w_b > 0 ? sum_b / w_b : 0) - (w_a > 0 ? sum_a / w_a : 0);
  r->tested = r->n_a >= DIFF_MIN_SAMPLES && r->n_b >= DIFF_MIN_SAMPLES;
  r->tested_p99 = r->n_a >= GROUP_SMALL && r->n_b >= GROUP_SMALL;
  boot_pair pair = {wk->bins_a, na, wk->bins_b, nb};
  return boot_compare(&pair, wk->resamples, wk->seed ^ salt, &wk->boot, &r->p50, &r->p99);
}

static int by_contribution(const void *x, const void *y) {
  const diff_row *a = x, *b = y; /* share: contribution over the change, signed */
  if (a->share != b->share)
    return a->share > b->share ? -1 : 1;
  return (a->contrib_ns < b->contrib_ns) - (a->contrib_ns > b->contrib_ns);
}

static int op_fill(work *wk, const diff_keys *keys, uint32_t op, diff_op *o) {
  uint32_t id = E2E + op;
  o->name = keys->ops[op];
  o->n_a = wk->a.to[id] - wk->a.from[id];
  o->n_b = wk->b.to[id] - wk->b.from[id];
  o->w_a = o->w_b = 0;
  for (size_t i = wk->a.from[id]; i < wk->a.to[id]; i++)
    o->w_a += wk->a.s[i].w;
  for (size_t i = wk->b.from[id]; i < wk->b.to[id]; i++)
    o->w_b += wk->b.s[i].w;
  o->e2e.key = NULL;
  if (row_fill(wk, id, op, o->w_a, o->w_b, &o->e2e) != 0)
    return -1;
  double sa = 0, sb = 0;
  for (size_t i = wk->a.from[id]; i < wk->a.to[id]; i++)
    sa += wk->a.s[i].w * wk->a.s[i].ns;
  for (size_t i = wk->b.from[id]; i < wk->b.to[id]; i++)
    sb += wk->b.s[i].w * wk->b.s[i].ns;
  o->mean_a = o->w_a > 0 ? sa / o->w_a : 0;
  o->mean_b = o->w_b > 0 ? sb / o->w_b : 0;
  o->e2e.share = 1;
  size_t n = 0;
  for (size_t k = 0; k < keys->n; k++)
    n += keys->keys[k].op == op && (wk->a.to[k] > wk->a.from[k] || wk->b.to[k] > wk->b.from[k]);
  o->rows = calloc(n ? n : 1, sizeof(diff_row));
  if (o->rows == NULL)
    return -1;
  double change = o->e2e.contrib_ns;
  for (uint32_t k = 0; k < keys->n; k++) {
    if (keys->keys[k].op != op ||
        (wk->a.to[k] == wk->a.from[k] && wk->b.to[k] == wk->b.from[k]))
      continue;
    diff_row *r = &o->rows[o->n_rows++];
    r->key = &keys->keys[k];
    if (row_fill(wk, k, keys->keys[k].hash, o->w_a, o->w_b, r) != 0)
      return -1;
    r->share = change != 0 ? r->contrib_ns / change : 0;
  }
  qsort(o->rows, o->n_rows, sizeof(diff_row), by_contribution);
  return 0;
}

static double added(const diff_op *o, double w_b) {
  return fabs(o->e2e.contrib_ns) * (w_b > 0 ? o->w_b / w_b : 0);
}

/* qsort has no user pointer: the ops are ranked by a key computed first */
typedef struct ranked_op {
  double added;
  diff_op op;
} ranked_op;

static int by_added(const void *x, const void *y) {
  const ranked_op *a = x, *b = y;
  return (a->added < b->added) - (a->added > b->added);
}

static void mark_significant(diff_result *r, double w_b) {
  r->tests = 0;
  for (size_t i = 0; i < r->n_ops; i++)
    for (size_t k = 0; k < r->ops[i].n_rows; k++)
      r->tests += r->ops[i].rows[k].tested + r->ops[i].rows[k].tested_p99;
  double alpha = r->tests ? 0.05 / (double)r->tests : 0.05;
  double best = 0;
  for (size_t i = 0; i < r->n_ops; i++) {
    diff_op *o = &r->ops[i];
    o->e2e.significant = (o->e2e.tested && o->e2e.p50.p < 0.05) ||
                         (o->e2e.tested_p99 && o->e2e.p99.p < 0.05);
    for (size_t k = 0; k < o->n_rows; k++) {
      diff_row *x = &o->rows[k];
      x->significant = (x->tested && x->p50.p < alpha) || (x->tested_p99 && x->p99.p < alpha);
      /* the culprit: the largest part of the largest change */
      double part = x->share * added(o, w_b);
      if (x->significant && x->share > 0 && part > best) {
        best = part;
        r->culprit_op = o;
        r->culprit = x;
      }
    }
  }
}

static void work_free(work *wk) {
  free(wk->a.s);
  free(wk->b.s);
  free(wk->bins_a);
  free(wk->bins_b);
  boot_scratch_free(&wk->boot);
}

int diff_compare(const diff_view *a, const diff_view *b, unsigned resamples, uint64_t seed,
                 diff_result *r) {
  memset(r, 0, sizeof(*r));
  r->resamples = resamples;
  r->seed = seed;
  work *wk = calloc(1, sizeof(*wk));
  if (wk == NULL)
    return -1;
  wk->resamples = resamples;
  wk->seed = seed;
  const diff_keys *keys = a->set->keys;
  int rc = side_build(a, &wk->a) | side_build(b, &wk->b);
  wk->bins_a = malloc((wk->a.n ? wk->a.n : 1) * sizeof(boot_bin));
  wk->bins_b = malloc((wk->b.n ? wk->b.n : 1) * sizeof(boot_bin));
  ranked_op *ranked = calloc(keys->n_ops ? keys->n_ops : 1, sizeof(*ranked));
  if (rc != 0 || wk->bins_a == NULL || wk->bins_b == NULL || ranked == NULL) {
    free(ranked);
    work_free(wk);
    free(wk);
    return -1;
  }
  double w_b = 0;
  for (size_t i = 0; i < b->n; i++)
    w_b += b->set->traces[b->idx[i]].w;
  size_t n = 0;
  for (uint32_t op = 0; op < keys->n_ops && rc == 0; op++) {
    uint32_t id = E2E + op;
    if (wk->a.to[id] == wk->a.from[id] && wk->b.to[id] == wk->b.from[id])
      continue;
    rc = op_fill(wk, keys, op, &ranked[n].op);
    ranked[n].added = added(&ranked[n].op, w_b);
    n++;
  }
  qsort(ranked, n, sizeof(*ranked), by_added);
  r->ops = malloc((n ? n : 1) * sizeof(diff_op));
  for (size_t i = 0; i < n; i++) {
    if (r->ops != NULL)
      r->ops[i] = ranked[i].op;
    else
      free(ranked[i].op.rows);
  }
  r->n_ops = r->ops ? n : 0;
  free(ranked);
  work_free(wk);
  free(wk);
  if (rc != 0 || r->ops == NULL) {
    diff_result_free(r);
    return -1;
  }
  mark_significant(r, w_b);
  return 0;
}

void diff_result_free(diff_result *r) {
  for (size_t i = 0; i < r->n_ops; i++)
    free(r->ops[i].rows);
  free(r->ops);
  memset(r, 0, sizeof(*r));
}
