/* The points a pair keeps (clock_sync.h, "Memory"): per message, x = a's
 * time and v = its bound on θ − θ0, both ns from the pair's origin, in
 * buckets of whole seconds of a's clock; a bucket COMPACT_LAG seconds
 * older than the newest is reduced to its two hulls (cut first where a
 * trial fit finds a step in it), and past MAX_BUCKETS neighbours merge.
 * Must never drop a constraint a line through a bucket can see (its hulls
 * are exactly those) nor merge across a step unless steps alone would
 * keep twice the buckets; knows nothing of the pair's windows or of the
 * hosts' maps. */
#include "clock/clock_sync_internal.h"

#define COMPACT_LAG 8     /* buckets: how late an RPC may come and still be kept whole */
#define MAX_BUCKETS 1024  /* per pair; past it, neighbours merge */

static void bucket_free(bucket *b) {
  free(b->pt[UP]), free(b->pt[LOW]);
}

/* Keeps the bucket's hulls only: exactly the constraints a line through
 * the bucket sees. */
static void hull_bucket(pair *p, bucket *b) {
  for (int k = UP; k <= LOW; k++) {
    if (!b->sorted)
      ch_sort(b->pt[k], b->n[k]);
    uint32_t n = (uint32_t)ch_hull(b->pt[k], b->n[k], k == UP);
    p->points -= b->n[k] - n;
    b->n[k] = n;
    ch_point *shrunk = n ? realloc(b->pt[k], n * sizeof(ch_point)) : NULL;
    if (shrunk != NULL)
      b->pt[k] = shrunk, b->cap[k] = n;
  }
  b->compact = b->sorted = true;
}

/* Bucket i cut where the nw windows of cs->cw meet. -1 when out of
 * memory (the bucket left whole). */
static int split(clock_sync *cs, pair *p, uint32_t i, int nw) {
  bucket old = p->bk[i], *nb = calloc((size_t)nw, sizeof(bucket));
  size_t cap = p->cbk, at[2] = {0, 0};
  int ok = nb != NULL && grow(&p->bk, &cap, p->nbk + (size_t)nw - 1, sizeof(bucket)) == 0;
  for (int w = 0; w < nw && ok; w++) {
    nb[w].lo = w ? nb[w - 1].hi : old.lo;
    nb[w].hi = w + 1 < nw ? (cs->cw[w].x_hi + cs->cw[w + 1].x_lo) / 2 : old.hi;
    for (int k = UP; k <= LOW && ok; k++) {
      size_t end = w + 1 < nw ? ch_first_at(old.pt[k], old.n[k], nb[w].hi) : old.n[k];
      nb[w].n[k] = nb[w].cap[k] = (uint32_t)(end - at[k]);
      nb[w].pt[k] = malloc((end - at[k] + 1) * sizeof(ch_point));
      ok = nb[w].pt[k] != NULL;
      if (ok && end > at[k])
        memcpy(nb[w].pt[k], old.pt[k] + at[k], (end - at[k]) * sizeof(ch_point));
      at[k] = end;
    }
    nb[w].sorted = true;
  }
  if (nb != NULL)
    p->cbk = (uint32_t)cap;
  if (!ok) {
    for (int w = 0; nb != NULL && w < nw; w++)
      bucket_free(&nb[w]);
    free(nb);
    return -1;
  }
  memmove(&p->bk[i + (uint32_t)nw], &p->bk[i + 1], (p->nbk - i - 1) * sizeof(bucket));
  p->nbk += (uint32_t)nw - 1;
  for (int w = 0; w < nw; w++) {
    p->bk[i + (uint32_t)w] = nb[w];
    hull_bucket(p, &p->bk[i + (uint32_t)w]);
  }
  bucket_free(&old);
  free(nb);
  return 0;
}

/* Whether one line fits the bucket's points (sorted). */
static bool one_line(clock_sync *cs, const bucket *b, int *nw) {
  *nw = ch_fit(b->pt[UP], b->n[UP], b->pt[LOW], b->n[LOW], SLOPE_MAX, cs->cw,
               CLOCK_SYNC_MAX_WINDOWS, &cs->fit);
  return *nw <= 1;
}

/* Bucket i reduced to its hulls. A bucket no line fits holds a step: it
 * is first cut where its windows meet, so hulls never mix the two sides
 * (the step stays found, both sides stay bounded). Returns the buckets
 * bucket i became. */
static uint32_t compact(clock_sync *cs, pair *p, uint32_t i) {
  bucket *b = &p->bk[i];
  for (int k = UP; k <= LOW && !b->sorted; k++)
    ch_sort(b->pt[k], b->n[k]);
  b->sorted = true;
  int nw;
  if (!one_line(cs, b, &nw) && nw > 1 && nw <= CLOCK_SYNC_MAX_WINDOWS && split(cs, p, i, nw) == 0)
    return (uint32_t)nw;
  hull_bucket(p, &p->bk[i]);
  return 1;
}

/* Two adjacent compacted buckets into one, if a line fits them both (or
 * force): their points are disjoint in x and sorted, so the union is
 * sorted too. 0; 1 when refused or out of memory (both as they were). */
static int merge(clock_sync *cs, pair *p, bucket *into, bucket *from, bool force) {
  for (int k = UP; k <= LOW; k++) {
    size_t cap = into->cap[k];
    if (grow(&into->pt[k], &cap, into->n[k] + from->n[k], sizeof(ch_point)) != 0)
      return 1;
    into->cap[k] = (uint32_t)cap;
  }
  for (int k = UP; k <= LOW; k++)
    if (from->n[k] > 0)
      memcpy(into->pt[k] + into->n[k], from->pt[k], from->n[k] * sizeof(ch_point));
  bucket both = *into;
  both.n[UP] += from->n[UP], both.n[LOW] += from->n[LOW];
  int nw;
  if (!force && !one_line(cs, &both, &nw))
    return 1; /* a step between them: kept apart */
  *into = both;
  into->hi = from->hi;
  bucket_free(from);
  hull_bucket(p, into);
  return 0;
}

void cs_maintain(clock_sync *cs, pair *p) {
  double old = ((double)p->newest - COMPACT_LAG) * BUCKET_NS - p->phase;
  for (uint32_t i = 0; i < p->nbk; i++)
    if (!p->bk[i].compact && p->bk[i].hi <= old)
      i += compact(cs, p, i) - 1;
  if (p->nbk <= MAX_BUCKETS)
    return;
  /* neighbours merge while they span at most twice the mean: about half
   * as many buckets, all about as wide, however long the run; across a
   * step only when steps alone would keep twice the buckets */
  double width = 2 * (p->bk[p->nbk - 1].hi - p->bk[0].lo) / MAX_BUCKETS;
  bool force = p->nbk > 2 * MAX_BUCKETS;
  uint32_t w = 0;
  for (uint32_t r = 0; r < p->nbk; w++) {
    p->bk[w] = p->bk[r++];
    while (r < p->nbk && p->bk[w].compact && p->bk[r].compact &&
           p->bk[r].hi - p->bk[w].lo <= width && merge(cs, p, &p->bk[w], &p->bk[r], force) == 0)
      r++;
  }
  p->nbk = w;
}

static bucket *bucket_for(pair *p, double x) {
  uint32_t i = p->nbk; /* new points are mostly the newest */
  while (i > 0 && p->bk[i - 1].lo > x)
    i--;
  if (i > 0 && x < p->bk[i - 1].hi)
    return &p->bk[i - 1];
  size_t cap = p->cbk;
  if (grow(&p->bk, &cap, p->nbk + 1, sizeof(bucket)) != 0)
    return NULL;
  p->cbk = (uint32_t)cap;
  memmove(&p->bk[i + 1], &p->bk[i], (p->nbk - i) * sizeof(bucket));
  double lo = floor((x + p->phase) / BUCKET_NS) * BUCKET_NS - p->phase, hi = lo + BUCKET_NS;
  p->bk[i] = (bucket){.lo = i > 0 ? fmax(lo, p->bk[i - 1].hi) : lo,
                      .hi = i < p->nbk ? fmin(hi, p->bk[i + 1].lo) : hi, .sorted = true};
  p->nbk++;
  return &p->bk[i];
}

int cs_add_point(clock_sync *cs, pair *p, int kind, double x, double v) {
  bucket *b = bucket_for(p, x);
  if (b == NULL)
    return -1;
  size_t cap = b->cap[kind];
  if (grow(&b->pt[kind], &cap, b->n[kind] + 1, sizeof(ch_point)) != 0)
    return -1;
  b->cap[kind] = (uint32_t)cap;
  b->pt[kind][b->n[kind]++] = (ch_point){x, v};
  b->compact = b->sorted = false; /* a late point: the bucket is hulled again */
  p->points++;
  int64_t k = (int64_t)floor((x + p->phase) / BUCKET_NS);
  if (k <= p->newest)
    return 0;
  p->newest = k;
  cs_maintain(cs, p);
  return 0;
}

/* The pair's points, all buckets in x order, into cs->pts. */
int cs_gather(clock_sync *cs, pair *p, size_t n[2]) {
  n[UP] = n[LOW] = 0;
  for (uint32_t i = 0; i < p->nbk; i++)
    n[UP] += p->bk[i].n[UP], n[LOW] += p->bk[i].n[LOW];
  for (int k = UP; k <= LOW; k++)
    if (grow(&cs->pts[k], &cs->cpts[k], n[k], sizeof(ch_point)) != 0)
      return -1;
  size_t at[2] = {0, 0};
  for (uint32_t i = 0; i < p->nbk; i++) { /* buckets are in x order */
    bucket *b = &p->bk[i];
    for (int k = UP; k <= LOW; k++) {
      if (!b->sorted)
        ch_sort(b->pt[k], b->n[k]);
      if (b->n[k] > 0)
        memcpy(cs->pts[k] + at[k], b->pt[k], b->n[k] * sizeof(ch_point));
      at[k] += b->n[k];
    }
    b->sorted = true;
  }
  p->x_lo = fmin(n[UP] ? cs->pts[UP][0].x : INFINITY, n[LOW] ? cs->pts[LOW][0].x : INFINITY);
  p->x_hi = fmax(n[UP] ? cs->pts[UP][n[UP] - 1].x : -INFINITY,
                 n[LOW] ? cs->pts[LOW][n[LOW] - 1].x : -INFINITY);
  return 0;
}
