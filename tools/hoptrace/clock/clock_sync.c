/* Clock alignment's API (clock_sync.h): hosts by name, the pairs they
 * form, an RPC turned into its two messages' points, a solve's steps in
 * order, and the summary, accessors and clock table read from the
 * result. The work is elsewhere: the points in clock_points.c, each
 * pair's fit in clock_fit.c, the tree and the maps in clock_maps.c, the
 * geometry in clock_hull.c; this file must never do it itself. The
 * accessors and the table only read (const) and never allocate: a report
 * never changes what it reports. */
#include "clock/clock_sync.h"

#include <inttypes.h>

#include "clock/clock_sync_internal.h"
#include "read/text_hash.h"

#define EXACT_MAX 4e15    /* below 2^52: differences kept in doubles stay exact */

/* ---- hosts and pairs ---- */

clock_sync *clock_sync_new(void) {
  clock_sync *cs = calloc(1, sizeof(*cs));
  if (cs == NULL)
    return NULL;
  memset(cs->slot, 0xff, sizeof(cs->slot));
  cs->ref = -1;
  cs->sum.reference = -1;
  return cs;
}

void clock_sync_free(clock_sync *cs) {
  if (cs == NULL)
    return;
  for (int i = 0; i < cs->nh; i++)
    free(cs->h[i].name), free(cs->h[i].seg);
  for (int i = 0; i < cs->np; i++) {
    pair *p = &cs->p[i];
    for (uint32_t b = 0; b < p->nbk; b++)
      free(p->bk[b].pt[UP]), free(p->bk[b].pt[LOW]);
    for (int w = 0; w < p->cwin; w++)
      ch_poly_free(&p->win[w].w.poly);
    free(p->bk), free(p->win);
  }
  for (int w = 0; w < CLOCK_SYNC_MAX_WINDOWS; w++)
    ch_poly_free(&cs->cw[w].poly);
  ch_fit_scratch_free(&cs->fit);
  free(cs->pix), free(cs->p), free(cs->pts[0]), free(cs->pts[1]), free(cs->cut);
  free(cs->con), free(cs->z), free(cs->z0);
  free(cs);
}

static int find_host(const clock_sync *cs, const char *name, size_t *slot) {
  size_t i = text_hash(name, strlen(name)) % NAME_SLOTS;
  for (; cs->slot[i] >= 0; i = (i + 1) % NAME_SLOTS)
    if (strcmp(cs->h[cs->slot[i]].name, name) == 0)
      break;
  *slot = i;
  return cs->slot[i];
}

int clock_sync_host(clock_sync *cs, const char *name) {
  size_t i;
  int h = find_host(cs, name, &i);
  if (h >= 0)
    return h;
  if (cs->nh == CLOCK_SYNC_MAX_HOSTS) {
    cs->sum.hosts_refused++;
    return -1;
  }
  char *copy = strdup(name);
  if (copy == NULL)
    return -1;
  cs->h[cs->nh] = (host){.name = copy, .parent = -1, .pair = -1};
  cs->slot[i] = (int16_t)cs->nh;
  return cs->nh++;
}

static pair *pair_get(clock_sync *cs, int a, int b) {
  if (b >= cs->pcap) { /* the index grows with the hosts, by doubling */
    int cap = cs->pcap ? cs->pcap : 8;
    while (cap <= b)
      cap *= 2;
    int32_t *pix = malloc((size_t)cap * (size_t)cap * sizeof(*pix));
    if (pix == NULL)
      return NULL;
    memset(pix, 0xff, (size_t)cap * (size_t)cap * sizeof(*pix));
    for (int i = 0; i < cs->pcap; i++)
      memcpy(pix + i * cap, cs->pix + i * cs->pcap, (size_t)cs->pcap * sizeof(*pix));
    free(cs->pix);
    cs->pix = pix, cs->pcap = cap;
  }
  int i = pair_index(cs, a, b);
  if (i >= 0)
    return &cs->p[i];
  size_t cap = (size_t)cs->cp;
  if (grow(&cs->p, &cap, (size_t)cs->np + 1, sizeof(pair)) != 0)
    return NULL;
  cs->cp = (int)cap;
  cs->p[cs->np] = (pair){.h = {a, b}, .newest = INT64_MIN};
  cs->pix[a * cs->pcap + b] = cs->np;
  return &cs->p[cs->np++];
}

/* ---- RPCs in ---- */

static void seen(host *h, int64_t t0, int64_t t1) {
  if (!h->seen || t0 < h->tmin)
    h->tmin = t0;
  if (!h->seen || t1 > h->tmax)
    h->tmax = t1;
  h->seen = true;
}

int clock_sync_add_rpc(clock_sync *cs, int client_host, int server_host, int64_t cs_ns,
                       int64_t sr_ns, int64_t ss_ns, int64_t cr_ns) {
  if (client_host < 0 || client_host >= cs->nh || server_host < 0 || server_host >= cs->nh) {
    cs->sum.rejected++;
    return -1;
  }
  if (client_host == server_host) {
    cs->sum.same_host++;
    return 0;
  }
  bool client_a = client_host < server_host;
  pair *p = pair_get(cs, client_a ? client_host : server_host, client_a ? server_host : client_host);
  if (p == NULL) {
    cs->sum.rejected++;
    return -1;
  }
  /* the request and the reply as (a's time, b's time): a → b is UP */
  int64_t ta[2] = {client_a ? cs_ns : sr_ns, client_a ? cr_ns : ss_ns};
  int64_t tb[2] = {client_a ? sr_ns : cs_ns, client_a ? ss_ns : cr_ns};
  int kind[2] = {client_a ? UP : LOW, client_a ? LOW : UP};
  bool ok = cr_ns >= cs_ns && ss_ns >= sr_ns;
  if (ok && !p->started) { /* buckets then follow a's seconds, whatever comes first */
    p->origin = ta[0];
    p->phase = (double)(((ta[0] % (int64_t)BUCKET_NS) + (int64_t)BUCKET_NS) % (int64_t)BUCKET_NS);
    ok = !__builtin_sub_overflow(tb[0], ta[0], &p->theta0);
  }
  double x[2], v[2];
  for (int m = 0; m < 2 && ok; m++) {
    int64_t dx = 0, d = 0, dv = 0;
    ok = !__builtin_sub_overflow(ta[m], p->origin, &dx) &&
         !__builtin_sub_overflow(tb[m], ta[m], &d) && !__builtin_sub_overflow(d, p->theta0, &dv);
    x[m] = (double)dx, v[m] = (double)dv;
    ok = ok && fabs(x[m]) < EXACT_MAX && fabs(v[m]) < EXACT_MAX;
  }
  if (ok) {
    p->started = true;
    ok = cs_add_point(cs, p, kind[0], x[0], v[0]) == 0 &&
         cs_add_point(cs, p, kind[1], x[1], v[1]) == 0;
  }
  if (!ok) {
    p->rejected++, cs->sum.rejected++;
    return -1;
  }
  seen(&cs->h[client_host], cs_ns, cr_ns);
  seen(&cs->h[server_host], sr_ns, ss_ns);
  p->rpcs++, cs->sum.rpcs++;
  return 0;
}

/* ---- a solve, step by step ---- */

int clock_sync_solve(clock_sync *cs, const char *reference) {
  size_t slot;
  int ref = reference ? find_host(cs, reference, &slot) : -1;
  if (reference != NULL && ref < 0)
    return -1;
  cs->solved = false; /* until every map is whole again */
  for (int i = 0; i < cs->nh; i++)
    cs->h[i].partners = 0;
  for (int i = 0; i < cs->np; i++) {
    pair *p = &cs->p[i];
    if (cs_fit_pair(cs, p) != 0)
      return -1;
    cs->h[p->h[0]].partners += p->rpcs > 0, cs->h[p->h[1]].partners += p->rpcs > 0;
  }
  cs->ref = ref >= 0 ? ref : cs_choose_reference(cs);
  for (int i = 0; i < cs->nh; i++) {
    host *h = &cs->h[i];
    h->origin = h->tmin / 2 + h->tmax / 2;
    h->scale = fmax(dsub(h->tmax, h->tmin) / 2, 1e9);
    h->nseg = 0;
  }
  cs_build_tree(cs);
  if (cs->ref >= 0) {
    host *r = &cs->h[cs->ref];
    if (cs_push_seg(r, (seg){INT64_MIN, INT64_MIN, INT64_MIN, {0}}, (affine){.o = r->origin}) != 0)
      return -1;
  }
  for (int o = 1; o < cs->norder; o++)
    if (cs_compose_host(cs, cs->order[o]) != 0)
      return -1;
  cs->solved = true;
  clock_sync_summary *sum = &cs->sum;
  sum->violated = sum->violated_tree = cs_count_violated(cs);
  sum->refined = false, sum->converged = sum->violated == 0, sum->sweeps = 0;
  if (sum->violated > 0) {
    sum->refined = true;
    if (cs_refine(cs) != 0)
      return -1;
    sum->violated = cs_count_violated(cs);
    if (sum->violated > sum->violated_tree) { /* worse than where it started: undone */
      cs_put_maps(cs, cs->z0);
      sum->violated = cs_count_violated(cs);
    }
  }
  /* the projection skips points by a step (unknown which piece holds):
   * whether every kept point is met is the verdict */
  sum->converged = sum->violated == 0;
  return 0;
}

/* ---- the summary and the report ---- */

void clock_sync_get_summary(const clock_sync *cs, clock_sync_summary *out) {
  *out = cs->sum;
  out->hosts = cs->nh, out->pairs = cs->np;
  out->reference = cs->solved ? cs->ref : -1;
  out->aligned = cs->solved ? cs->norder : 0;
  out->tree_edges = cs->solved ? cs->norder - 1 : 0;
  out->points = 0;
  for (int i = 0; i < cs->np; i++)
    out->points += cs->p[i].points;
}

int clock_sync_get_host(const clock_sync *cs, int host_ix, int64_t at_ns, clock_sync_host_info *out) {
  if (host_ix < 0 || host_ix >= cs->nh)
    return -1;
  const host *h = &cs->h[host_ix];
  int64_t at = at_ns != INT64_MIN ? at_ns : h->tmin / 2 + h->tmax / 2;
  *out = (clock_sync_host_info){.name = h->name, .parent = -1, .at_ns = at,
                                .bound_ns = clock_sync_bound_ns(cs, host_ix, at)};
  if (cs_mapped(cs, host_ix) == NULL)
    return 0;
  const affine *m = &h->seg[cs_seg_index(h, at)].m;
  out->reference = host_ix == cs->ref, out->aligned = true;
  out->parent = h->parent, out->segments = h->nseg;
  out->offset_ns = (double)m->k + m->c + m->g * dsub(at, m->o);
  out->drift_ppm = m->g * 1e6;
  return 0;
}

int clock_sync_pair_count(const clock_sync *cs) {
  return cs->np;
}

int clock_sync_get_pair(const clock_sync *cs, int i, int window_ix, clock_sync_pair_info *out) {
  if (i < 0 || i >= cs->np)
    return -1;
  const pair *p = &cs->p[i];
  if (window_ix < -1 || window_ix >= (cs->solved ? p->nwin : 0))
    return -1;
  *out = (clock_sync_pair_info){.a = p->h[0], .b = p->h[1], .rpcs = p->rpcs, .rejected = p->rejected,
                                .points = p->points, .windows = p->nwin, .fitted = p->fitted,
                                .inconsistent = p->inconsistent, .tree_edge = p->tree,
                                .violated = p->violated};
  if (!cs->solved || !p->fitted)
    return 0;
  double lo_x = p->x_lo, hi_x = p->x_hi;
  const window *w = window_ix >= 0 ? &p->win[window_ix]
                                   : cs_win_at(p, 0, p->origin + llround((lo_x + hi_x) / 2));
  if (window_ix >= 0)
    lo_x = w->w.x_lo, hi_x = w->w.x_hi;
  double mid = (lo_x + hi_x) / 2, X = (mid - w->w.x_mid) * 1e-9, lo, hi, blo, bhi;
  ch_poly_range(&w->w.poly, X, &lo, &hi);
  ch_poly_slopes(&w->w.poly, &blo, &bhi);
  double base = (double)p->theta0;
  out->mid_ns = p->origin + llround(mid);
  out->span_lo_ns = p->origin + (int64_t)lo_x, out->span_hi_ns = p->origin + (int64_t)hi_x;
  out->offset_ns = base + w->w.a + w->w.b * X;
  out->offset_lo_ns = base + lo, out->offset_hi_ns = base + hi, out->width_ns = hi - lo;
  out->drift_ppm = w->w.b * 1e-3, out->drift_lo_ppm = blo * 1e-3, out->drift_hi_ppm = bhi * 1e-3;
  return 0;
}

static bool talks_to_aligned(const clock_sync *cs, int host_ix) {
  for (int i = 0; i < cs->np; i++) {
    const pair *p = &cs->p[i];
    if (p->rpcs > 0 && (p->h[0] == host_ix || p->h[1] == host_ix) &&
        cs->h[p->h[p->h[0] == host_ix]].aligned)
      return true;
  }
  return false;
}

void clock_sync_print(const clock_sync *cs, FILE *out) {
  clock_sync_summary s;
  clock_sync_get_summary(cs, &s);
  fprintf(out, "clock sync: reference %s, %d/%d hosts aligned, %d pairs, %" PRIu64 " RPCs, %" PRIu64
               " rejected; broken constraints: %" PRIu64 " by the tree, %" PRIu64 " final",
          s.reference >= 0 ? cs->h[s.reference].name : "-", s.aligned, s.hosts, s.pairs, s.rpcs,
          s.rejected, s.violated_tree, s.violated);
  if (s.refined)
    fprintf(out, " (refined: %s after %d passes)", s.converged ? "converged" : "NOT converged", s.sweeps);
  fputc('\n', out);
  fprintf(out, "# pair A B rpcs rejected offset_us(B-A) [lo hi] drift_ppm [lo hi] width_us windows"
               " flags mid_ns (A's clock, where the offset is given)\n"
               "# host NAME role parent offset_us(reference-local) drift_ppm bound_us segments\n");
  for (int i = 0; i < cs->np; i++) {
    clock_sync_pair_info p;
    clock_sync_get_pair(cs, i, -1, &p);
    fprintf(out, "pair %s %s %" PRIu64 " %" PRIu64, cs->h[p.a].name, cs->h[p.b].name, p.rpcs,
            p.rejected);
    if (cs->solved && p.fitted)
      fprintf(out, " %+.3f [%+.3f %+.3f] %+.3f [%+.3f %+.3f] %.3f %d", p.offset_ns / 1e3,
              p.offset_lo_ns / 1e3, p.offset_hi_ns / 1e3, p.drift_ppm, p.drift_lo_ppm,
              p.drift_hi_ppm, p.width_ns / 1e3, p.windows);
    else
      fprintf(out, " - [- -] - [- -] - 0");
    fprintf(out, "%s%s%s", p.tree_edge ? " tree" : "", p.inconsistent ? " inconsistent" : "",
            p.fitted ? "" : " unfitted");
    if (p.violated)
      fprintf(out, " violated=%" PRIu64, p.violated);
    if (cs->solved && p.fitted)
      fprintf(out, " mid_ns=%" PRId64, p.mid_ns);
    fputc('\n', out);
  }
  for (int i = 0; i < cs->nh; i++) {
    clock_sync_host_info h;
    clock_sync_get_host(cs, i, INT64_MIN, &h);
    const char *role = h.reference ? "reference" : h.aligned ? "aligned" : "unaligned";
    fprintf(out, "host %s %s %s", h.name, role, h.parent >= 0 ? cs->h[h.parent].name : "-");
    if (h.aligned && h.bound_ns == INT64_MAX)
      fprintf(out, " %+.3f %+.3f inf %d\n", h.offset_ns / 1e3, h.drift_ppm, h.segments);
    else if (h.aligned)
      fprintf(out, " %+.3f %+.3f %.3f %d\n", h.offset_ns / 1e3, h.drift_ppm, (double)h.bound_ns / 1e3,
              h.segments);
    else
      fprintf(out, " - - - 0 (not aligned: %s)\n",
              talks_to_aligned(cs, i) ? "its RPCs with the reference's component fit no clock line"
                                      : "no RPC with the reference's component");
  }
}
