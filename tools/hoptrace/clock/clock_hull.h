/* The geometry of clock_sync. A clock line θ(X) = a + b·X must pass
 * below every upper point (X, v) and above every lower point; only the
 * lower hull of the upper points and the upper hull of the lower points
 * can bind it, and the (a, b) that pass form a convex polygon, cut here
 * from a box one half-plane at a time (a window of points per line when
 * no single line fits). For several hosts at once, cyclic projection
 * onto half-spaces. Pure double arithmetic on numbers the caller has made
 * small (origins subtracted): never sees an epoch timestamp, never
 * allocates except to grow its own buffers. */
#ifndef HT_TOOL_CLOCK_HULL_H
#define HT_TOOL_CLOCK_HULL_H

#include <stdbool.h>
#include <stddef.h>

/* x: ns from the pair's origin; v: the bound on θ − θ0 (ns). */
typedef struct ch_point {
  double x, v;
} ch_point;

/* Sorts by x (then v). */
void ch_sort(ch_point *p, size_t n);
/* In place, p sorted by x: keeps the hull that binds a line, the lower
 * hull of upper points (upper = true) or the upper hull of lower points.
 * Returns the new count. */
size_t ch_hull(ch_point *p, size_t n, bool upper);

/* Vertices (a, b) of a convex polygon, in order; n == 0: empty. */
typedef struct ch_poly {
  double *a, *b;
  size_t n, cap;
} ch_poly;

void ch_poly_free(ch_poly *p);
/* The box [a_lo, a_hi] × [b_lo, b_hi]. 0, or -1 when out of memory. */
int ch_poly_box(ch_poly *p, double a_lo, double a_hi, double b_lo, double b_hi);
/* dst = src ∩ {a + b·X <= v} (upper) or {a + b·X >= v}; dst may end
 * empty. src and dst are distinct. 0, or -1 when out of memory. */
int ch_poly_clip(const ch_poly *src, ch_poly *dst, double X, double v, bool upper);
int ch_poly_copy(ch_poly *dst, const ch_poly *src);
/* Re-expresses the lines for X' = X − dX (a' = a + b·dX). */
void ch_poly_shift(ch_poly *p, double dX);
/* Area centroid (vertex mean when degenerate): inside, as p is convex. */
void ch_poly_centroid(const ch_poly *p, double *a, double *b);
/* min and max of a + b·X over the polygon (exact: linear in (a, b)). */
void ch_poly_range(const ch_poly *p, double X, double *lo, double *hi);
/* min and max of b. */
void ch_poly_slopes(const ch_poly *p, double *lo, double *hi);

/* One line fit over consecutive points (by x). */
typedef struct ch_window {
  double x_lo, x_hi, x_mid; /* its points' span; X = (x − x_mid) s */
  size_t nu, nl;            /* its upper and lower points */
  ch_poly poly;             /* the feasible (a, b): θ − θ0 = a + b·X, ns and ns/s */
  double a, b;              /* the estimate: the polygon's centroid */
} ch_window;

/* Buffers ch_fit reuses from call to call. */
typedef struct ch_fit_scratch {
  ch_point *hull;
  size_t cap;
  ch_poly p[2];
} ch_fit_scratch;
void ch_fit_scratch_free(ch_fit_scratch *s);

/* Fits the upper points u and lower points l (each sorted by x) with
 * |b| <= slope_max: one window when a single line fits them all, else
 * windows cut greedily in x order, each extended while a line still fits
 * (a clock step). w[0..max) keep their polygons' memory across calls.
 * Returns the number of windows, max + 1 when more were needed (the
 * windows are then meaningless), or -1 when out of memory. */
int ch_fit(const ch_point *u, size_t nu, const ch_point *l, size_t nl, double slope_max,
           ch_window *w, int max, ch_fit_scratch *s);

/* First index of p (sorted by x) with x >= x. */
size_t ch_first_at(const ch_point *p, size_t n, double x);

/* Where the step between consecutive windows l and r lies (x, ns): after
 * the last point of l that rules r out (no line of r's polygon meets it),
 * before the first point of r that rules l out. Points both windows meet
 * cannot tell: with sparse points the zone is wide. */
void ch_step_zone(const ch_point *u, size_t nu, const ch_point *l, size_t nl,
                  const ch_window *left, const ch_window *right, double zone[2]);
/* The most θ can change between l and r at x (ns): how far the clock
 * that stepped jumped, at most. */
double ch_step_size(const ch_window *left, const ch_window *right, double x);

/* A half-space over pairs of variables (z[v], z[v + 1]):
 *   z[vr] + tr·z[vr + 1] − z[vs] − ts·z[vs + 1] >= beta
 * vr or vs -1: that side is fixed at 0 (the reference host). */
typedef struct ch_halfspace {
  int vr, vs;
  double tr, ts, beta;
} ch_halfspace;

/* Cyclic projection (Agmon–Motzkin / Kaczmarz relaxation) from z: each
 * half-space z breaks is met, with margin to spare, by the shortest move,
 * pass after pass, until a pass finds none broken (true) or max_passes or
 * about max_work half-space visits are spent (false). *passes: how many. */
bool ch_project(double *z, const ch_halfspace *h, size_t n, double margin, int max_passes,
                double max_work, int *passes);

#endif
