/* The hosts' maps onto the reference's clock: the spanning tree of the
 * tightest fitted pairs, each host's map composed along it (piecewise
 * where an edge or the parent's map has a step), the check of every
 * pair's kept points against the maps and their joint refinement, and
 * the lookups (to_reference, bound_ns). Must never change a map without
 * the summary saying so (violated_tree, violated, refined), and never
 * allocate on the lookup path. */
#include "clock/clock_sync_internal.h"

#define REFINE_SWEEPS 1000
#define REFINE_WORK 2e7    /* constraint visits per solve (~0.1 s) */
#define REFINE_MARGIN 1.0 /* ns kept inside each constraint: mapped times round to ns */

/* second ∘ first */
static affine compose(const affine *first, const affine *second) {
  double d = dsub2(first->o, second->o, first->k, 0) + first->c;
  return (affine){.k = sat_add(first->k, second->k), .o = first->o,
                  .c = first->c + second->c + second->g * d,
                  .g = first->g + second->g + first->g * second->g};
}

static void reorigin(affine *m, int64_t o) {
  m->c += m->g * dsub(o, m->o);
  m->o = o;
  if (fabs(m->c) < 9e18) { /* whole ns into k, c stays small */
    int64_t whole = (int64_t)m->c;
    m->k = sat_add(m->k, whole);
    m->c -= (double)whole;
  }
}

/* ---- the tree and the hosts' maps ---- */

int cs_seg_index(const host *h, int64_t t) {
  int lo = 0, hi = h->nseg - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (h->seg[mid].start <= t)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

int cs_choose_reference(const clock_sync *cs) {
  int best = -1;
  for (int i = 0; i < cs->nh; i++)
    if (best < 0 || cs->h[i].partners > cs->h[best].partners ||
        (cs->h[i].partners == cs->h[best].partners && strcmp(cs->h[i].name, cs->h[best].name) < 0))
      best = i;
  return best;
}

/* Prim from the reference over fitted pairs, weight the pair's width. */
void cs_build_tree(clock_sync *cs) {
  double best[CLOCK_SYNC_MAX_HOSTS];
  int via[CLOCK_SYNC_MAX_HOSTS];
  for (int i = 0; i < cs->nh; i++) {
    cs->h[i].aligned = false, cs->h[i].parent = cs->h[i].pair = -1;
    best[i] = INFINITY, via[i] = -1;
  }
  for (int i = 0; i < cs->np; i++)
    cs->p[i].tree = false;
  cs->norder = 0;
  for (int u = cs->ref; u >= 0;) {
    cs->h[u].aligned = true;
    cs->order[cs->norder++] = u;
    int next = -1;
    for (int v = 0; v < cs->nh; v++) {
      if (cs->h[v].aligned)
        continue;
      int i = pair_index(cs, u < v ? u : v, u < v ? v : u);
      if (i >= 0 && cs->p[i].fitted && cs->p[i].width < best[v])
        best[v] = cs->p[i].width, via[v] = i;
      if (via[v] >= 0 && (next < 0 || best[v] < best[next]))
        next = v;
    }
    if (next >= 0) {
      pair *p = &cs->p[via[next]];
      p->tree = true;
      cs->h[next].pair = via[next];
      cs->h[next].parent = p->h[0] == next ? p->h[1] : p->h[0];
    }
    u = next;
  }
}

static int cmp_start(const void *l, const void *r) {
  int64_t a = ((const seg *)l)->start, b = ((const seg *)r)->start;
  return (a > b) - (a < b);
}

int cs_push_seg(host *h, seg at, affine m) {
  size_t cap = (size_t)h->cseg;
  if (grow(&h->seg, &cap, (size_t)h->nseg + 1, sizeof(seg)) != 0)
    return -1;
  h->cseg = (int)cap;
  reorigin(&m, h->origin);
  at.m = m;
  h->seg[h->nseg++] = at;
  return 0;
}

static int push_cut(clock_sync *cs, size_t *n, int64_t t, int64_t zlo, int64_t zhi) {
  if (grow(&cs->cut, &cs->ccut, *n + 1, sizeof(seg)) != 0)
    return -1;
  cs->cut[(*n)++] = (seg){.start = t, .zlo = zlo, .zhi = zhi};
  return 0;
}

/* The host's map: the tree edge's window maps, then its parent's map. A
 * piece starts where the edge changes window or the parent its piece. */
int cs_compose_host(clock_sync *cs, int hi) {
  host *h = &cs->h[hi];
  const host *par = &cs->h[h->parent];
  const pair *p = &cs->p[h->pair];
  int side = hi == p->h[0] ? 0 : 1;
  size_t n = 0;
  for (int i = 0; i < p->nwin; i++) {
    const window *w = &p->win[i];
    if (i > 0 && push_cut(cs, &n, w->start[side], w->zone[side][0], w->zone[side][1]) != 0)
      return -1;
    affine e = cs_edge(w, side), back = inverse(&e);
    int64_t last = apply(&e, w->end[side]); /* the parent's pieces starting in w's times */
    for (int j = cs_seg_index(par, apply(&e, w->start[side])) + 1;
         j < par->nseg && par->seg[j].start < last; j++) {
      const seg *ps = &par->seg[j];
      int64_t t = apply(&back, ps->start);
      if (t > w->start[side] && t < w->end[side] &&
          push_cut(cs, &n, t, apply(&back, ps->zlo), apply(&back, ps->zhi)) != 0)
        return -1;
    }
  }
  if (n > 1)
    qsort(cs->cut, n, sizeof(seg), cmp_start);
  h->nseg = 0;
  const window *lw = NULL;
  int lj = -1;
  for (size_t i = 0; i <= n; i++) {
    if (i > 0 && i < n && cs->cut[i].start == cs->cut[i - 1].start) {
      cs->cut[i].zlo = imin(cs->cut[i].zlo, cs->cut[i - 1].zlo);
      cs->cut[i].zhi = imax(cs->cut[i].zhi, cs->cut[i - 1].zhi);
      continue;
    }
    seg at = i ? cs->cut[i - 1] : (seg){INT64_MIN, INT64_MIN, INT64_MIN, {0}};
    int64_t start = at.start;
    int64_t rep = n == 0 ? h->origin
                  : i == 0 ? sat_add(cs->cut[0].start, -1000)
                  : i == n ? sat_add(start, 1000)
                           : start / 2 + cs->cut[i].start / 2;
    const window *w = cs_win_at(p, side, rep);
    affine e = cs_edge(w, side);
    int j = cs_seg_index(par, apply(&e, rep));
    if (w == lw && j == lj)
      continue; /* same pieces on both sides: one segment */
    lw = w, lj = j;
    if (cs_push_seg(h, at, compose(&e, &par->seg[j].m)) != 0)
      return -1;
  }
  return 0;
}

/* ---- checking and refining the maps against every pair ---- */

/* A kept point as its message: receiver r at tr, sender s at ts. */
static void message(const pair *p, int kind, ch_point q, int *r, int64_t *tr, int *s, int64_t *ts) {
  int64_t ta = p->origin + (int64_t)q.x, tb = sat_add(sat_add(ta, p->theta0), (int64_t)q.v);
  *r = p->h[kind == UP], *tr = kind == UP ? tb : ta;
  *s = p->h[kind != UP], *ts = kind == UP ? ta : tb;
}

/* The pieces of h's map that may hold at t: its own, and a neighbour's
 * when t is in the zone of the step between them. Returns how many. */
static int pieces(const host *h, int64_t t, int j[2]) {
  j[0] = cs_seg_index(h, t);
  if (j[0] > 0 && t <= h->seg[j[0]].zhi)
    return j[1] = j[0] - 1, 2;
  if (j[0] + 1 < h->nseg && t >= h->seg[j[0] + 1].zlo)
    return j[1] = j[0] + 1, 2;
  return 1;
}

/* reference(receive) − reference(send) under the maps' pieces jr, js */
static double gap_in(const clock_sync *cs, int r, int64_t tr, int jr, int s, int64_t ts, int js) {
  const affine *mr = &cs->h[r].seg[jr].m, *ms = &cs->h[s].seg[js].m;
  return dsub2(tr, ts, mr->k, ms->k) + (mr->c + mr->g * dsub(tr, mr->o)) -
         (ms->c + ms->g * dsub(ts, ms->o));
}

static double gap(const clock_sync *cs, int r, int64_t tr, int s, int64_t ts) {
  return gap_in(cs, r, tr, cs_seg_index(&cs->h[r], tr), s, ts, cs_seg_index(&cs->h[s], ts));
}

/* The message's gap at its best: by a step, either piece may be right. */
static double best_gap(const clock_sync *cs, int r, int64_t tr, int s, int64_t ts) {
  int jr[2], js[2], nr = pieces(&cs->h[r], tr, jr), ns = pieces(&cs->h[s], ts, js);
  double best = -INFINITY;
  for (int a = 0; a < nr; a++)
    for (int b = 0; b < ns; b++)
      best = fmax(best, gap_in(cs, r, tr, jr[a], s, ts, js[b]));
  return best;
}

static bool both_aligned(const clock_sync *cs, const pair *p) {
  return cs->h[p->h[0]].aligned && cs->h[p->h[1]].aligned;
}

uint64_t cs_count_violated(clock_sync *cs) {
  uint64_t total = 0;
  for (int i = 0; i < cs->np; i++) {
    pair *p = &cs->p[i];
    p->violated = 0;
    for (uint32_t b = 0; b < p->nbk && both_aligned(cs, p); b++)
      for (int k = UP; k <= LOW; k++)
        for (uint32_t j = 0; j < p->bk[b].n[k]; j++) {
          int r, s;
          int64_t tr, ts;
          message(p, k, p->bk[b].pt[k][j], &r, &tr, &s, &ts);
          p->violated += best_gap(cs, r, tr, s, ts) < 0;
        }
    total += p->violated;
  }
  return total;
}

static int add_constraint(clock_sync *cs, const pair *p, int kind, ch_point q) {
  if (grow(&cs->con, &cs->ccon, cs->ncon + 1, sizeof(ch_halfspace)) != 0)
    return -1;
  int r, s;
  int64_t tr, ts;
  message(p, kind, q, &r, &tr, &s, &ts);
  const host *R = &cs->h[r], *S = &cs->h[s];
  int jr = cs_seg_index(R, tr), js = cs_seg_index(S, ts);
  cs->con[cs->ncon++] = (ch_halfspace){
      .vr = R->var < 0 ? -1 : R->var + 2 * jr, .vs = S->var < 0 ? -1 : S->var + 2 * js,
      .tr = dsub(tr, R->origin) / R->scale, .ts = dsub(ts, S->origin) / S->scale,
      .beta = -dsub2(tr, ts, R->seg[jr].m.k, S->seg[js].m.k)};
  return 0;
}

/* The hull constraints of every pair: per run of points whose two hosts'
 * map pieces stay the same, as only there is the relative map a line. */
static int build_constraints(clock_sync *cs) {
  cs->ncon = 0;
  for (int i = 0; i < cs->np; i++) {
    const pair *p = &cs->p[i];
    if (!both_aligned(cs, p))
      continue;
    for (int k = UP; k <= LOW; k++) {
      size_t n = 0;
      int key[2] = {-1, -1};
      for (uint32_t b = 0; b <= p->nbk; b++)
        for (uint32_t j = 0; j < (b < p->nbk ? p->bk[b].n[k] : 1); j++) {
          int r, s, kr[2] = {-2, -2}, ks[2] = {-2, -2};
          int64_t tr, ts;
          if (b < p->nbk) {
            message(p, k, p->bk[b].pt[k][j], &r, &tr, &s, &ts);
            if (pieces(&cs->h[r], tr, kr) + pieces(&cs->h[s], ts, ks) > 2)
              continue; /* by a step, unknown which piece holds: not a constraint */
          }
          if (n > 0 && (kr[0] != key[0] || ks[0] != key[1])) { /* the run ends */
            n = ch_hull(cs->pts[0], n, k == UP);
            for (size_t m = 0; m < n; m++)
              if (add_constraint(cs, p, k, cs->pts[0][m]) != 0)
                return -1;
            n = 0;
          }
          if (b == p->nbk)
            break;
          if (grow(&cs->pts[0], &cs->cpts[0], n + 1, sizeof(ch_point)) != 0)
            return -1;
          cs->pts[0][n++] = p->bk[b].pt[k][j];
          key[0] = kr[0], key[1] = ks[0];
        }
    }
  }
  return 0;
}

void cs_put_maps(clock_sync *cs, const double *z) {
  for (int o = 1; o < cs->norder; o++) {
    host *h = &cs->h[cs->order[o]];
    for (int j = 0; j < h->nseg; j++)
      h->seg[j].m.c = z[h->var + 2 * j], h->seg[j].m.g = z[h->var + 2 * j + 1] / h->scale;
  }
}

/* The joint refinement: variables per map piece c and G = g·scale, so
 * both weigh alike over the host's data; the reference's are fixed. */
int cs_refine(clock_sync *cs) {
  size_t nv = 0;
  cs->h[cs->ref].var = -1;
  for (int o = 1; o < cs->norder; o++) {
    host *h = &cs->h[cs->order[o]];
    h->var = (int)nv;
    nv += 2 * (size_t)h->nseg;
  }
  size_t cap = cs->cz;
  if (grow(&cs->z, &cap, nv, sizeof(double)) != 0 ||
      grow(&cs->z0, &cs->cz, nv, sizeof(double)) != 0 || build_constraints(cs) != 0)
    return -1;
  for (int o = 1; o < cs->norder; o++) {
    const host *h = &cs->h[cs->order[o]];
    for (int j = 0; j < h->nseg; j++)
      cs->z[h->var + 2 * j] = h->seg[j].m.c, cs->z[h->var + 2 * j + 1] = h->seg[j].m.g * h->scale;
  }
  if (nv > 0)
    memcpy(cs->z0, cs->z, nv * sizeof(double));
  ch_project(cs->z, cs->con, cs->ncon, REFINE_MARGIN, REFINE_SWEEPS, REFINE_WORK, &cs->sum.sweeps);
  cs_put_maps(cs, cs->z);
  return 0;
}

/* ---- lookups ---- */

const host *cs_mapped(const clock_sync *cs, int host_ix) {
  if (!cs->solved || host_ix < 0 || host_ix >= cs->nh || !cs->h[host_ix].aligned)
    return NULL;
  return &cs->h[host_ix];
}

int64_t clock_sync_to_reference(const clock_sync *cs, int host_ix, int64_t local_ns) {
  const host *h = cs_mapped(cs, host_ix);
  return h ? apply(&h->seg[cs_seg_index(h, local_ns)].m, local_ns) : local_ns;
}

/* The other side's time window c gives for t on side's clock, q, and
 * the interval [q + dlo, q + dhi] the truth lies in by c's polygon. */
static int64_t edge_interval(const pair *p, const window *c, int side, int64_t t, double *dlo,
                             double *dhi) {
  affine e = cs_edge(c, side);
  int64_t q = apply(&e, t);
  double X = (dsub(side == 0 ? t : q, p->origin) - c->w.x_mid) * 1e-9, lo, hi;
  ch_poly_range(&c->w.poly, X, &lo, &hi);
  double th = c->w.a + c->w.b * X;
  *dlo = side == 0 ? lo - th : th - hi;
  *dhi = side == 0 ? hi - th : th - lo;
  return q;
}

/* Per tree edge to the reference: where the maps put the parent's time
 * (q + d) against the feasible interval of the edge's window, so the
 * farther end bounds the error (in a step's zone, of either window); the
 * parent's own error is added on. Drift tilts each interval slightly: the
 * (1 + 2·max drift) factor covers it. */
int64_t clock_sync_bound_ns(const clock_sync *cs, int host_ix, int64_t local_ns) {
  if (cs_mapped(cs, host_ix) == NULL)
    return INT64_MAX;
  if (host_ix == cs->ref)
    return 0;
  double total = 0;
  int64_t t = local_ns;
  for (int cur = host_ix; cur != cs->ref;) {
    const host *h = &cs->h[cur], *par = &cs->h[h->parent];
    const pair *p = &cs->p[h->pair];
    int side = cur == p->h[0] ? 0 : 1, wi = cs_win_index(p, side, t);
    if (t < p->seen_lo[side] || t > p->seen_hi[side])
      return INT64_MAX;
    double dlo, dhi;
    int64_t q = edge_interval(p, &p->win[wi], side, t, &dlo, &dhi);
    const affine *mp = &par->seg[cs_seg_index(par, q)].m;
    double d = gap(cs, cur, t, h->parent, q) / (1 + mp->g);
    double dev = fmax(d - dlo, dhi - d);
    int near[2] = {wi > 0 && t <= p->win[wi].zone[side][1] ? wi - 1 : -1,
                   wi + 1 < p->nwin && t >= p->win[wi + 1].zone[side][0] ? wi + 1 : -1};
    if ((near[0] >= 0 && p->win[wi].blind) || (near[1] >= 0 && p->win[wi + 1].blind))
      return INT64_MAX;
    for (int k = 0; k < 2; k++)
      if (near[k] >= 0) {
        int64_t qc = edge_interval(p, &p->win[near[k]], side, t, &dlo, &dhi);
        double o = dsub(qc, q);
        dev = fmax(dev, fmax(d - (o + dlo), o + dhi - d));
      }
    total += dev * (1 + 2e-9 * SLOPE_MAX) * (1 + fabs(mp->g));
    cur = h->parent, t = q;
  }
  return total >= 9e18 ? INT64_MAX : (int64_t)ceil(total) + 1; /* + rounding to ns */
}
