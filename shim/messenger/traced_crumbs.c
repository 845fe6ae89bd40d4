/* Breadcrumbs (traced_crumbs.h). One spin lock for the table: a note is
 * a hash, a compare and a few stores under it (every recorded span in
 * flight mode pays it), a claim is rare. URLs are interned once, and a
 * call's peer is found by its serial (hooks.h ht_hook_peer: no other peer
 * ever has it), the text compared only when the serial is new.
 * Must never: allocate but for a new URL, or block beyond the lock. */
#include <stdlib.h>
#include <string.h>

#include "common/counters.h"
#include "common/spin.h"
#include "messenger/traced_crumbs.h"

typedef struct crumb {
  uint64_t hi, lo;
  uint8_t n, claimed;
  uint8_t peer[TS_CRUMB_PEERS]; /* index + 1 into urls */
} crumb;

typedef struct bucket {
  uint64_t at_ns;
  uint32_t tokens;
} bucket;

struct ts_crumbs {
  ht_spin lock;
  unsigned n_urls;
  uint64_t serial_seen[TS_CRUMB_URLS]; /* the peer's serial, as last seen */
  char *url[TS_CRUMB_URLS];
  bucket rate[2];
  crumb slot[TS_CRUMB_SLOTS];
};

ts_crumbs *ht_shim_crumbs_new(void) {
  ts_crumbs *c = calloc(1, sizeof(*c));
  if (c != NULL) {
    atomic_init(&c->lock.held, false);
    c->rate[0].tokens = c->rate[1].tokens = TS_NOTICE_BURST;
  }
  return c;
}

void ht_shim_crumbs_free(ts_crumbs *c) {
  if (c == NULL)
    return;
  for (unsigned i = 0; i < c->n_urls; i++)
    free(c->url[i]);
  free(c);
}

static crumb *slot_of(ts_crumbs *c, const ht_trace_context *ctx) {
  uint64_t h = (ctx->trace_id_lo ^ ctx->trace_id_hi) * 0x9e3779b97f4a7c15ull;
  return &c->slot[(h >> 40) & (TS_CRUMB_SLOTS - 1)];
}

/* The peer's URL's index + 1; 0 when the table is full or memory ran
 * out. Lock held. A serial seen before names the same URL (a peer keeps
 * its URL); a new one (another connection to the URL, say) is looked up
 * by the text. */
static uint8_t url_index(ts_crumbs *c, const ht_hook_peer *to) {
  for (unsigned i = 0; i < c->n_urls; i++)
    if (c->serial_seen[i] == to->serial)
      return (uint8_t)(i + 1);
  const char *url = to->url != NULL ? to->url : "";
  for (unsigned i = 0; i < c->n_urls; i++)
    if (strcmp(c->url[i], url) == 0) {
      c->serial_seen[i] = to->serial;
      return (uint8_t)(i + 1);
    }
  if (c->n_urls == TS_CRUMB_URLS || (c->url[c->n_urls] = strdup(url)) == NULL)
    return 0;
  c->serial_seen[c->n_urls] = to->serial;
  return (uint8_t)(++c->n_urls);
}

/* ctx's crumb, taken over from an older trace when needed. Lock held. */
static crumb *take(ts_crumbs *c, const ht_trace_context *ctx) {
  crumb *k = slot_of(c, ctx);
  if (k->lo != ctx->trace_id_lo || k->hi != ctx->trace_id_hi)
    *k = (crumb){.hi = ctx->trace_id_hi, .lo = ctx->trace_id_lo};
  return k;
}

bool ht_shim_crumbs_note(ts_crumbs *c, const ht_trace_context *ctx, const ht_hook_peer *to) {
  ht_spin_lock(&c->lock);
  crumb *k = take(c, ctx);
  uint8_t p = to != NULL ? url_index(c, to) : 0;
  bool lost = to != NULL && p == 0; /* the URL table full (or no memory) */
  bool known = p == 0;
  for (uint8_t i = 0; i < k->n && !known; i++)
    known = k->peer[i] == p;
  if (!known && k->n < TS_CRUMB_PEERS)
    k->peer[k->n++] = p;
  else if (!known)
    lost = true; /* the trace's peers full */
  bool claimed = k->claimed;
  ht_spin_unlock(&c->lock);
  if (__builtin_expect(lost, 0)) /* never silent: its capture stops here */
    ht_counter_add(HT_CTR_CRUMB_PEERS_DROPPED, 1);
  return claimed;
}

int ht_shim_crumbs_claim(ts_crumbs *c, const ht_trace_context *ctx, bool known_only,
                    const char *urls[TS_CRUMB_PEERS], int *n) {
  *n = 0;
  ht_spin_lock(&c->lock);
  crumb *k = slot_of(c, ctx);
  bool known = k->lo == ctx->trace_id_lo && k->hi == ctx->trace_id_hi;
  int rc;
  if (!known && known_only) {
    rc = -1;
  } else {
    k = take(c, ctx);
    rc = k->claimed ? 0 : 1;
    k->claimed = 1;
    for (uint8_t i = 0; rc == 1 && i < k->n; i++)
      urls[(*n)++] = c->url[k->peer[i] - 1];
  }
  ht_spin_unlock(&c->lock);
  return rc;
}

void ht_shim_crumbs_unclaim(ts_crumbs *c, const ht_trace_context *ctx) {
  ht_spin_lock(&c->lock);
  crumb *k = slot_of(c, ctx);
  if (k->lo == ctx->trace_id_lo && k->hi == ctx->trace_id_hi)
    k->claimed = 0;
  ht_spin_unlock(&c->lock);
}

bool ht_shim_crumbs_rate(ts_crumbs *c, int which, uint64_t now_ns) {
  ht_spin_lock(&c->lock);
  bucket *b = &c->rate[which != 0];
  /* now_ns was read before the lock: another thread's later reading may
   * have come first (now_ns - at_ns would wrap: a full bucket) */
  uint64_t refill =
      now_ns > b->at_ns ? (now_ns - b->at_ns) / (1000000000ull / TS_NOTICE_RATE) : 0;
  if (refill > 0) {
    uint64_t t = b->tokens + refill;
    b->tokens = t > TS_NOTICE_BURST ? TS_NOTICE_BURST : (uint32_t)t;
    b->at_ns = now_ns;
  }
  bool ok = b->tokens > 0;
  if (ok)
    b->tokens--;
  ht_spin_unlock(&c->lock);
  return ok;
}
