/* What the clock_sync files share and nothing else sees: the model's
 * structs (a pair's buckets of points and windows of fits, a host's map
 * pieces, the clock_sync itself), the exact-enough int64 arithmetic and
 * the calls from one file to the next. clock_sync.c is the API
 * (clock_sync.h), clock_points.c keeps the points, clock_fit.c fits each
 * pair, clock_maps.c makes, checks and reads the hosts' maps.
 *
 * Private: included by clock_*.c only, never by a user of clock_sync.h.
 * Timestamps stay int64 until an origin near the data is subtracted: a
 * double holds an epoch timestamp only to ~256 ns. */
#ifndef HT_TOOL_CLOCK_SYNC_INTERNAL_H
#define HT_TOOL_CLOCK_SYNC_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clock/clock_hull.h"
#include "clock/clock_sync.h"
#include "util/grow.h"

#define BUCKET_NS 1e9     /* of the pair's lower host's clock */
#define SLOPE_MAX (CLOCK_SYNC_MAX_DRIFT_PPM * 1e3) /* ns/s */
#define NAME_SLOTS 512    /* open addressing, at most half full */

enum { UP, LOW }; /* UP: a message a → b (θ below), LOW: b → a (θ above) */

typedef struct bucket {
  double lo, hi; /* x range, ns from the pair's origin */
  ch_point *pt[2];
  uint32_t n[2], cap[2];
  bool compact, sorted;
} bucket;

/* y = t + k + c + g·(t − o): the integer part stays exact, c and g small. */
typedef struct affine {
  int64_t k, o;
  double c, g;
} affine;

typedef struct window { /* a line fit with points of both kinds */
  ch_window w;
  int64_t start[2], end[2]; /* the times it serves on a's and b's clocks */
  int64_t zone[2][2];       /* around start: times the step may lie at, either
                             * window may hold there (none for the first) */
  bool blind;               /* a window bounded on one side only was between:
                             * in the zone, nothing bounds the truth */
  affine fwd;               /* a's clock → b's clock */
} window;

typedef struct pair {
  int h[2];
  bool started, fitted, inconsistent, tree;
  int64_t origin, theta0; /* a's clock of the first message; its b − a */
  int64_t newest;         /* newest bucket number */
  double phase;           /* origin's ns into its second: buckets are whole seconds */
  bucket *bk;
  uint32_t nbk, cbk;
  uint64_t rpcs, rejected, violated;
  size_t points;
  window *win;
  int nwin, cwin;
  int64_t seen_lo[2], seen_hi[2]; /* per side, past a window bounded on one
                                   * side only, before or after the fits:
                                   * nothing bounds the truth out there */
  double x_lo, x_hi, width;
} pair;

typedef struct seg {
  int64_t start;   /* local time it starts at */
  int64_t zlo, zhi; /* around start: a step's zone, either piece may hold */
  affine m;        /* local → reference, o = the host's origin */
} seg;

typedef struct host {
  char *name;
  bool seen, aligned;
  int64_t tmin, tmax, origin;
  double scale; /* ns: half the span of its RPCs, at least 1 s */
  int parent, pair, partners, var;
  seg *seg;
  int nseg, cseg;
} host;

struct clock_sync {
  host h[CLOCK_SYNC_MAX_HOSTS];
  int nh, ref;
  int16_t slot[NAME_SLOTS];
  int32_t *pix; /* pair index of (a, b), pcap × pcap */
  int pcap;
  pair *p;
  int np, cp;
  bool solved;
  clock_sync_summary sum;
  /* solve's scratch, kept from call to call */
  ch_fit_scratch fit;
  ch_window cw[CLOCK_SYNC_MAX_WINDOWS];
  ch_point *pts[2];
  size_t cpts[2];
  seg *cut; /* a host's piece starts while composing (m unused) */
  size_t ccut;
  int order[CLOCK_SYNC_MAX_HOSTS]; /* the tree's hosts, parents first */
  int norder;
  ch_halfspace *con;
  size_t ncon, ccon;
  double *z, *z0;
  size_t cz;
};

/* Grows the array *slot points to to hold need elements (util/grow.h,
 * 16 to start). */
static inline int grow(void *slot, size_t *cap, size_t need, size_t size) {
  return ht_grow(slot, cap, need, size, 16);
}

static inline int pair_index(const clock_sync *cs, int a, int b) {
  return b < cs->pcap ? cs->pix[a * cs->pcap + b] : -1;
}

/* ---- exact-enough integer arithmetic ---- */

static inline int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r))
    return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

static inline double dsub(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_sub_overflow(a, b, &r) ? (double)a - (double)b : (double)r;
}

/* (a − b) + (c − d), exact when it fits: each pair may be epoch-sized. */
static inline double dsub2(int64_t a, int64_t b, int64_t c, int64_t d) {
  int64_t x, y, r;
  if (__builtin_sub_overflow(a, b, &x) || __builtin_sub_overflow(c, d, &y) ||
      __builtin_add_overflow(x, y, &r))
    return dsub(a, b) + dsub(c, d);
  return (double)r;
}

static inline int64_t imin(int64_t a, int64_t b) {
  return a < b ? a : b;
}

static inline int64_t imax(int64_t a, int64_t b) {
  return a > b ? a : b;
}

static inline int64_t to_i64(double v) {
  return v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)llround(v);
}

static inline int64_t apply(const affine *m, int64_t t) {
  return sat_add(sat_add(t, m->k), to_i64(m->c + m->g * dsub(t, m->o)));
}

static inline affine inverse(const affine *m) {
  return (affine){.k = -m->k, .o = sat_add(m->o, m->k), .c = -m->c / (1 + m->g),
                  .g = -m->g / (1 + m->g)};
}

/* ---- clock_points.c: a pair's points ---- */

/* One message's point (x, v) of kind UP or LOW into its bucket; old
 * buckets compacted as the newest moves on. 0, or -1 when out of memory. */
int cs_add_point(clock_sync *cs, pair *p, int kind, double x, double v);
/* Compacts the buckets old enough and merges neighbours past the limit
 * (a late point makes its old bucket whole again until this runs). */
void cs_maintain(clock_sync *cs, pair *p);
/* All the pair's kept points, sorted by x, into cs->pts[UP] and
 * cs->pts[LOW] (n[UP], n[LOW] of them); sets p->x_lo, p->x_hi. 0, or -1
 * when out of memory. */
int cs_gather(clock_sync *cs, pair *p, size_t n[2]);

/* ---- clock_fit.c: a pair's windows of line fits ---- */

/* Fits the pair from its kept points: its windows, the times each
 * serves, the zones of the steps between them, its width. 0, or -1 when
 * out of memory. */
int cs_fit_pair(clock_sync *cs, pair *p);
/* The window serving time t of side 0 (a) or 1 (b); the pair is fitted. */
int cs_win_index(const pair *p, int side, int64_t t);
const window *cs_win_at(const pair *p, int side, int64_t t);
/* The window's map from side's clock to the other side's. */
affine cs_edge(const window *w, int side);

/* ---- clock_maps.c: the tree and the hosts' maps ---- */

/* The piece of h's map that holds at t. */
int cs_seg_index(const host *h, int64_t t);
/* The host with the most RPC partners, ties to the smallest name. */
int cs_choose_reference(const clock_sync *cs);
/* The tree from cs->ref over fitted pairs: parents, cs->order. */
void cs_build_tree(clock_sync *cs);
/* Appends a piece to h's map (m re-expressed at h's origin). */
int cs_push_seg(host *h, seg at, affine m);
/* Host hi's map from its tree edge's and its parent's. */
int cs_compose_host(clock_sync *cs, int hi);
/* Kept points the maps break, per pair (p->violated) and in all. */
uint64_t cs_count_violated(clock_sync *cs);
/* The joint refinement of the maps over every pair's constraints; the
 * maps before it stay in cs->z0. 0, or -1 when out of memory. */
int cs_refine(clock_sync *cs);
/* The maps' offsets and drifts from z (cs_refine's variables). */
void cs_put_maps(clock_sync *cs, const double *z);
/* The host if solved and aligned, else NULL. */
const host *cs_mapped(const clock_sync *cs, int host_ix);

#endif
