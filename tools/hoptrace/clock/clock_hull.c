/* Monotone-chain hulls, Sutherland–Hodgman clipping of a convex polygon
 * by one half-plane, greedy windows where no line fits, and cyclic
 * projection. Tolerances are in ns, far below a timestamp's resolution
 * and far above double rounding on the magnitudes clock_sync passes
 * (|a| and |b·X| < 1e11). */
#include "clock/clock_hull.h"

#include <math.h>
#include <stdlib.h>

/* A vertex within this of the boundary counts as inside: rounding must
 * not empty a polygon that touches a constraint. */
#define CH_INSIDE_TOL 1e-3

static int cmp_point(const void *l, const void *r) {
  const ch_point *p = l, *q = r;
  if (p->x != q->x)
    return p->x < q->x ? -1 : 1;
  return (p->v > q->v) - (p->v < q->v);
}

void ch_sort(ch_point *p, size_t n) {
  if (n > 1)
    qsort(p, n, sizeof(*p), cmp_point);
}

static double turn(ch_point o, ch_point a, ch_point b) {
  return (a.x - o.x) * (b.v - o.v) - (a.v - o.v) * (b.x - o.x);
}

size_t ch_hull(ch_point *p, size_t n, bool upper) {
  double s = upper ? 1.0 : -1.0; /* the lower hull turns left */
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    while (k >= 2 && s * turn(p[k - 2], p[k - 1], p[i]) <= 0)
      k--;
    p[k++] = p[i];
  }
  return k;
}

void ch_poly_free(ch_poly *p) {
  free(p->a);
  free(p->b);
  *p = (ch_poly){0};
}

static int reserve(ch_poly *p, size_t n) {
  if (n <= p->cap)
    return 0;
  size_t cap = p->cap ? p->cap : 8;
  while (cap < n)
    cap *= 2;
  double *a = realloc(p->a, cap * sizeof(double));
  if (a == NULL)
    return -1;
  p->a = a;
  double *b = realloc(p->b, cap * sizeof(double));
  if (b == NULL)
    return -1;
  p->b = b;
  p->cap = cap;
  return 0;
}

int ch_poly_box(ch_poly *p, double a_lo, double a_hi, double b_lo, double b_hi) {
  if (reserve(p, 4) != 0)
    return -1;
  const double a[4] = {a_lo, a_hi, a_hi, a_lo}, b[4] = {b_lo, b_lo, b_hi, b_hi};
  for (int i = 0; i < 4; i++)
    p->a[i] = a[i], p->b[i] = b[i];
  p->n = 4;
  return 0;
}

int ch_poly_copy(ch_poly *dst, const ch_poly *src) {
  if (reserve(dst, src->n) != 0)
    return -1;
  for (size_t i = 0; i < src->n; i++)
    dst->a[i] = src->a[i], dst->b[i] = src->b[i];
  dst->n = src->n;
  return 0;
}

static bool same(double a0, double b0, double a1, double b1) {
  return fabs(a0 - a1) <= 1e-9 * (1 + fabs(a0)) && fabs(b0 - b1) <= 1e-9 * (1 + fabs(b0));
}

static void push(ch_poly *p, double a, double b) {
  if (p->n > 0 && same(p->a[p->n - 1], p->b[p->n - 1], a, b))
    return; /* an intersection on a vertex */
  p->a[p->n] = a;
  p->b[p->n] = b;
  p->n++;
}

int ch_poly_clip(const ch_poly *src, ch_poly *dst, double X, double v, bool upper) {
  dst->n = 0;
  if (src->n == 0)
    return 0;
  if (reserve(dst, src->n + 2) != 0)
    return -1;
  double s = upper ? 1.0 : -1.0;
  for (size_t i = 0; i < src->n; i++) {
    size_t j = (i + 1) % src->n;
    double fi = s * (src->a[i] + src->b[i] * X - v);
    double fj = s * (src->a[j] + src->b[j] * X - v);
    bool in_i = fi <= CH_INSIDE_TOL, in_j = fj <= CH_INSIDE_TOL;
    if (in_i)
      push(dst, src->a[i], src->b[i]);
    if (in_i != in_j && fi != fj) {
      double t = fi / (fi - fj);
      t = t < 0 ? 0 : t > 1 ? 1 : t;
      push(dst, src->a[i] + t * (src->a[j] - src->a[i]), src->b[i] + t * (src->b[j] - src->b[i]));
    }
  }
  while (dst->n > 1 && same(dst->a[0], dst->b[0], dst->a[dst->n - 1], dst->b[dst->n - 1]))
    dst->n--;
  return 0;
}

void ch_poly_shift(ch_poly *p, double dX) {
  for (size_t i = 0; i < p->n; i++)
    p->a[i] += p->b[i] * dX;
}

void ch_poly_centroid(const ch_poly *p, double *a, double *b) {
  double sa = 0, sb = 0, area2 = 0, ca = 0, cb = 0;
  double amin = INFINITY, amax = -INFINITY, bmin = INFINITY, bmax = -INFINITY;
  for (size_t i = 0; i < p->n; i++) {
    sa += p->a[i], sb += p->b[i];
    amin = fmin(amin, p->a[i]), amax = fmax(amax, p->a[i]);
    bmin = fmin(bmin, p->b[i]), bmax = fmax(bmax, p->b[i]);
  }
  /* shoelace about vertex 0, which keeps the products small */
  for (size_t i = 1; i + 1 < p->n; i++) {
    double a1 = p->a[i] - p->a[0], b1 = p->b[i] - p->b[0];
    double a2 = p->a[i + 1] - p->a[0], b2 = p->b[i + 1] - p->b[0];
    double c = a1 * b2 - a2 * b1;
    area2 += c;
    ca += (a1 + a2) * c;
    cb += (b1 + b2) * c;
  }
  if (p->n >= 3 && fabs(area2) > 1e-12 * (amax - amin) * (bmax - bmin)) {
    *a = p->a[0] + ca / (3 * area2);
    *b = p->b[0] + cb / (3 * area2);
  } else if (p->n > 0) { /* a segment or a point */
    *a = sa / (double)p->n;
    *b = sb / (double)p->n;
  } else {
    *a = *b = 0;
  }
}

void ch_poly_range(const ch_poly *p, double X, double *lo, double *hi) {
  *lo = INFINITY, *hi = -INFINITY;
  for (size_t i = 0; i < p->n; i++) {
    double y = p->a[i] + p->b[i] * X;
    *lo = fmin(*lo, y), *hi = fmax(*hi, y);
  }
}

void ch_poly_slopes(const ch_poly *p, double *lo, double *hi) {
  *lo = INFINITY, *hi = -INFINITY;
  for (size_t i = 0; i < p->n; i++)
    *lo = fmin(*lo, p->b[i]), *hi = fmax(*hi, p->b[i]);
}

void ch_fit_scratch_free(ch_fit_scratch *s) {
  free(s->hull);
  ch_poly_free(&s->p[0]);
  ch_poly_free(&s->p[1]);
  *s = (ch_fit_scratch){0};
}

/* Every a a feasible line can have when X stays within the points' span:
 * a box that holds the whole polygon, so clipping it loses nothing. */
static int start_box(ch_poly *p, const ch_point *u, size_t nu, const ch_point *l, size_t nl,
                     double slope_max) {
  double vmin = INFINITY, vmax = -INFINITY, xmin = INFINITY, xmax = -INFINITY;
  for (int k = 0; k < 2; k++) {
    const ch_point *q = k ? l : u;
    size_t n = k ? nl : nu;
    if (n == 0)
      continue;
    xmin = fmin(xmin, q[0].x), xmax = fmax(xmax, q[n - 1].x);
    for (size_t i = 0; i < n; i++)
      vmin = fmin(vmin, q[i].v), vmax = fmax(vmax, q[i].v);
  }
  double reach = slope_max * (xmax - xmin) * 1e-9 + 1;
  return ch_poly_box(p, vmin - reach, vmax + reach, -slope_max, slope_max);
}

static int close_window(ch_window *w, const ch_poly *p, double x0) {
  if (ch_poly_copy(&w->poly, p) != 0)
    return -1;
  w->x_mid = (w->x_lo + w->x_hi) / 2;
  ch_poly_shift(&w->poly, (w->x_mid - x0) * 1e-9);
  ch_poly_centroid(&w->poly, &w->a, &w->b);
  return 0;
}

/* The usual case, one line for everything: only the hulls are clipped. */
static int fit_one(const ch_point *u, size_t nu, const ch_point *l, size_t nl, double slope_max,
                   ch_window *w, ch_fit_scratch *s) {
  if (nu + nl > s->cap) {
    ch_point *h = realloc(s->hull, (nu + nl) * sizeof(*h));
    if (h == NULL)
      return -1;
    s->hull = h, s->cap = nu + nl;
  }
  for (size_t i = 0; i < nu; i++)
    s->hull[i] = u[i];
  size_t hu = ch_hull(s->hull, nu, true);
  for (size_t i = 0; i < nl; i++)
    s->hull[hu + i] = l[i];
  size_t hl = ch_hull(s->hull + hu, nl, false);
  w->x_lo = fmin(nu ? u[0].x : INFINITY, nl ? l[0].x : INFINITY);
  w->x_hi = fmax(nu ? u[nu - 1].x : -INFINITY, nl ? l[nl - 1].x : -INFINITY);
  double x0 = (w->x_lo + w->x_hi) / 2;
  ch_poly *cur = &s->p[0], *nxt = &s->p[1];
  if (start_box(cur, u, nu, l, nl, slope_max) != 0)
    return -1;
  for (size_t i = 0; i < hu + hl && cur->n > 0; i++) {
    if (ch_poly_clip(cur, nxt, (s->hull[i].x - x0) * 1e-9, s->hull[i].v, i < hu) != 0)
      return -1;
    ch_poly *t = cur;
    cur = nxt, nxt = t;
  }
  if (cur->n == 0)
    return 0;
  w->nu = nu, w->nl = nl;
  return close_window(w, cur, x0) == 0 ? 1 : -1;
}

int ch_fit(const ch_point *u, size_t nu, const ch_point *l, size_t nl, double slope_max,
           ch_window *w, int max, ch_fit_scratch *s) {
  if (nu + nl == 0 || max < 1)
    return 0;
  int r = fit_one(u, nu, l, nl, slope_max, &w[0], s);
  if (r != 0)
    return r;
  /* No line fits: walk the points in x order and cut a window where the
   * polygon would empty. */
  ch_poly *cur = &s->p[0], *nxt = &s->p[1];
  size_t i = 0, j = 0;
  int nw = 0;
  bool open = false;
  double x0 = 0;
  while (i < nu || j < nl) {
    bool up = j >= nl || (i < nu && u[i].x <= l[j].x);
    ch_point q = up ? u[i++] : l[j++];
    for (int attempt = 0; attempt < 2; attempt++) {
      if (!open) {
        if (nw == max)
          return max + 1;
        if (start_box(cur, u, nu, l, nl, slope_max) != 0)
          return -1;
        w[nw] = (ch_window){.poly = w[nw].poly, .x_lo = q.x, .x_hi = q.x};
        x0 = q.x;
        open = true;
      }
      if (ch_poly_clip(cur, nxt, (q.x - x0) * 1e-9, q.v, up) != 0)
        return -1;
      if (nxt->n > 0 || w[nw].nu + w[nw].nl == 0)
        break;
      if (close_window(&w[nw++], cur, x0) != 0) /* q starts the next window */
        return -1;
      open = false;
    }
    if (nxt->n == 0)
      continue; /* rounding emptied a fresh box: q ignored */
    ch_poly *t = cur;
    cur = nxt, nxt = t;
    w[nw].x_hi = q.x;
    *(up ? &w[nw].nu : &w[nw].nl) += 1;
  }
  if (open && close_window(&w[nw++], cur, x0) != 0)
    return -1;
  return nw;
}

size_t ch_first_at(const ch_point *p, size_t n, double x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (p[mid].x < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Whether the point rules the window out: no line of its polygon meets
 * it (the estimate alone would say so too often when the window is
 * loose). */
static bool rules_out(const ch_window *w, ch_point q, bool upper) {
  double lo, hi;
  ch_poly_range(&w->poly, (q.x - w->x_mid) * 1e-9, &lo, &hi);
  return upper ? lo > q.v : hi < q.v;
}

void ch_step_zone(const ch_point *u, size_t nu, const ch_point *l, size_t nl,
                  const ch_window *left, const ch_window *right, double zone[2]) {
  double after = left->x_lo, before = right->x_hi;
  for (int k = 0; k < 2; k++) {
    const ch_point *p = k ? l : u;
    size_t n = k ? nl : nu;
    for (size_t i = ch_first_at(p, n, left->x_lo); i < n && p[i].x <= right->x_hi; i++) {
      if (p[i].x <= left->x_hi && rules_out(right, p[i], k == 0))
        after = fmax(after, p[i].x);
      if (p[i].x >= right->x_lo && rules_out(left, p[i], k == 0))
        before = fmin(before, p[i].x);
    }
  }
  zone[0] = fmin(after, before), zone[1] = fmax(after, before);
}

double ch_step_size(const ch_window *left, const ch_window *right, double x) {
  double llo, lhi, rlo, rhi;
  ch_poly_range(&left->poly, (x - left->x_mid) * 1e-9, &llo, &lhi);
  ch_poly_range(&right->poly, (x - right->x_mid) * 1e-9, &rlo, &rhi);
  return fmax(fabs(rhi - llo), fabs(lhi - rlo));
}

static double side_value(const double *z, const ch_halfspace *c) {
  return (c->vr >= 0 ? z[c->vr] + c->tr * z[c->vr + 1] : 0) -
         (c->vs >= 0 ? z[c->vs] + c->ts * z[c->vs + 1] : 0);
}

bool ch_project(double *z, const ch_halfspace *h, size_t n, double margin, int max_passes,
                double max_work, int *passes) {
  double work = 0;
  for (*passes = 0;; ++*passes) {
    size_t broken = 0;
    for (size_t j = 0; j < n; j++)
      broken += side_value(z, &h[j]) < h[j].beta;
    if (broken == 0 || *passes == max_passes || work > max_work)
      return broken == 0;
    for (size_t j = 0; j < n; j++) {
      const ch_halfspace *c = &h[j];
      double miss = c->beta + margin - side_value(z, c);
      double norm = (c->vr >= 0 ? 1 + c->tr * c->tr : 0) + (c->vs >= 0 ? 1 + c->ts * c->ts : 0);
      if (miss <= 0 || norm == 0)
        continue;
      double step = miss / norm; /* along the normal, onto the boundary + margin */
      if (c->vr >= 0)
        z[c->vr] += step, z[c->vr + 1] += step * c->tr;
      if (c->vs >= 0)
        z[c->vs] -= step, z[c->vs + 1] -= step * c->ts;
    }
    work += 2.0 * (double)n;
  }
}
