/* A pair's windows of line fits: one window, or several after a clock
 * step; the times each window serves on both clocks, the zone around
 * each step where either may hold, the pair's width (the tree's edge
 * weight). Fitted from the kept points alone, afresh at every solve
 * (late points are hulled first); never touches the tree or a host's
 * map. */
#include "clock/clock_sync_internal.h"

/* The window serving time t of side 0 (a) or 1 (b); the pair is fitted. */
int cs_win_index(const pair *p, int side, int64_t t) {
  int lo = 0, hi = p->nwin - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (p->win[mid].start[side] <= t)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

const window *cs_win_at(const pair *p, int side, int64_t t) {
  return &p->win[cs_win_index(p, side, t)];
}

/* The window's map from side's clock to the other side's. */
affine cs_edge(const window *w, int side) {
  return side == 0 ? w->fwd : inverse(&w->fwd);
}

/* Each window serves the times up to the middle of the step's zone that
 * ends it, on both clocks; on b's, halfway between what b read just
 * before and just after (a time it never read if the step was forward;
 * one it read twice, split in the middle, if backward). Either window may
 * hold in the zone, widened by the step's size on both sides: if a's
 * clock stepped, its own readings there are ambiguous too. */
static void regions(const clock_sync *cs, const size_t n[2], pair *p) {
  for (int i = 0; i < p->nwin; i++) {
    window *w = &p->win[i], *l = i > 0 ? &p->win[i - 1] : NULL;
    w->end[0] = w->end[1] = INT64_MAX;
    if (l == NULL) {
      w->start[0] = w->start[1] = INT64_MIN;
      for (int side = 0; side < 2; side++)
        w->zone[side][0] = w->zone[side][1] = INT64_MIN;
      continue;
    }
    double z[2];
    ch_step_zone(cs->pts[UP], n[UP], cs->pts[LOW], n[LOW], &l->w, &w->w, z);
    double size = ch_step_size(&l->w, &w->w, (z[0] + z[1]) / 2);
    w->start[0] = p->origin + llround((z[0] + z[1]) / 2);
    int64_t za = p->origin + (int64_t)floor(z[0] - size), zb = p->origin + (int64_t)ceil(z[1] + size);
    w->zone[0][0] = za, w->zone[0][1] = zb;
    w->zone[1][0] = imin(apply(&l->fwd, za), apply(&w->fwd, za));
    w->zone[1][1] = imax(apply(&l->fwd, zb), apply(&w->fwd, zb));
    w->start[1] = apply(&l->fwd, w->start[0]) / 2 + apply(&w->fwd, w->start[0]) / 2;
    for (int side = 0; side < 2; side++) {
      if (w->start[side] <= l->start[side]) /* windows with a handful of points */
        w->start[side] = sat_add(l->start[side], 1);
      w->zone[side][0] = imin(w->zone[side][0], w->start[side]);
      w->zone[side][1] = imax(w->zone[side][1], w->start[side]);
      l->end[side] = w->start[side];
    }
  }
}

int cs_fit_pair(clock_sync *cs, pair *p) {
  size_t n[2];
  cs_maintain(cs, p); /* late points in old buckets: hulled again */
  if (cs_gather(cs, p, n) != 0)
    return -1;
  int nw = ch_fit(cs->pts[UP], n[UP], cs->pts[LOW], n[LOW], SLOPE_MAX, cs->cw,
                  CLOCK_SYNC_MAX_WINDOWS, &cs->fit);
  if (nw < 0)
    return -1;
  p->inconsistent = nw > 1;
  p->nwin = 0;
  bool blind = false;
  for (int i = 0; i < nw && nw <= CLOCK_SYNC_MAX_WINDOWS; i++) {
    if (cs->cw[i].nu == 0 || cs->cw[i].nl == 0) {
      blind = p->nwin > 0; /* bounded on one side only: estimates nothing */
      continue;
    }
    if (p->nwin == p->cwin) {
      size_t cap = (size_t)p->cwin;
      if (grow(&p->win, &cap, (size_t)p->nwin + 1, sizeof(window)) != 0)
        return -1;
      memset(p->win + p->cwin, 0, (cap - (size_t)p->cwin) * sizeof(window));
      p->cwin = (int)cap;
    }
    window *w = &p->win[p->nwin++];
    ch_poly keep = w->w.poly;
    w->w = cs->cw[i];
    w->w.poly = keep;
    w->blind = blind;
    blind = false;
    if (ch_poly_copy(&w->w.poly, &cs->cw[i].poly) != 0)
      return -1;
    int64_t r = llround(w->w.x_mid);
    double g = w->w.b * 1e-9;
    w->fwd = (affine){.k = p->theta0, .o = p->origin + r, .g = g,
                      .c = w->w.a + g * ((double)r - w->w.x_mid)};
  }
  regions(cs, n, p);
  p->fitted = p->nwin > 0;
  for (int side = 0; side < 2 && p->fitted; side++) {
    const window *first = &p->win[0], *last = &p->win[p->nwin - 1];
    int64_t lo = p->origin + (int64_t)first->w.x_lo, hi = p->origin + (int64_t)last->w.x_hi;
    bool before = cs->cw[0].nu == 0 || cs->cw[0].nl == 0;
    bool after = cs->cw[nw - 1].nu == 0 || cs->cw[nw - 1].nl == 0;
    p->seen_lo[side] = !before ? INT64_MIN : side == 0 ? lo : apply(&first->fwd, lo);
    p->seen_hi[side] = !after ? INT64_MAX : side == 0 ? hi : apply(&last->fwd, hi);
  }
  if (p->fitted) {
    double mid = (p->x_lo + p->x_hi) / 2, lo, hi;
    const window *w = cs_win_at(p, 0, p->origin + llround(mid));
    ch_poly_range(&w->w.poly, (mid - w->w.x_mid) * 1e-9, &lo, &hi);
    p->width = hi - lo;
  }
  return 0;
}
