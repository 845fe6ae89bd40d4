/* Pending requests: a per-connection hash by sequence number (to match a
 * reply) and one per-messenger min-heap of deadlines driving one uv timer
 * (no timer handle per request). Must never hold a request that has been
 * settled: settling removes it from both. Loop thread only. */
#include <stdlib.h>

#include "hoptrace/error.h"
#include "transport/internal.h"

#define FIRST_BUCKETS 64u

static size_t bucket_of(const ht_tr_conn *c, uint64_t seq) {
  return (size_t)((seq * 0x9e3779b97f4a7c15ull) >> 20) & (c->nbuckets - 1);
}

static int grow(ht_tr_conn *c) {
  size_t n = c->nbuckets == 0 ? FIRST_BUCKETS : c->nbuckets * 2;
  ht_tr_out **nb = calloc(n, sizeof(*nb));
  if (nb == NULL)
    return HT_ENOMEM;
  ht_tr_out **old = c->buckets;
  size_t oldn = c->nbuckets;
  c->buckets = nb;
  c->nbuckets = n;
  for (size_t i = 0; i < oldn; i++) {
    ht_tr_out *o = old[i];
    while (o != NULL) {
      ht_tr_out *next = o->hnext;
      size_t b = bucket_of(c, o->seq);
      o->hnext = nb[b];
      nb[b] = o;
      o = next;
    }
  }
  free(old);
  return 0;
}

int ht_tr_pending_add(ht_tr_conn *c, ht_tr_out *o) {
  if (c->npending >= c->nbuckets && grow(c) != 0 && c->nbuckets == 0)
    return HT_ENOMEM;
  size_t b = bucket_of(c, o->seq);
  o->hnext = c->buckets[b];
  c->buckets[b] = o;
  c->npending++;
  c->m->pending_total++;
  o->pend_conn = c;
  return 0;
}

ht_tr_out *ht_tr_pending_take(ht_tr_conn *c, uint64_t seq) {
  if (c->nbuckets == 0)
    return NULL;
  ht_tr_out **pp = &c->buckets[bucket_of(c, seq)];
  for (; *pp != NULL; pp = &(*pp)->hnext) {
    if ((*pp)->seq == seq) {
      ht_tr_out *o = *pp;
      *pp = o->hnext;
      o->hnext = NULL;
      c->npending--;
      c->m->pending_total--;
      return o;
    }
  }
  return NULL;
}

/* Settles every request of c (their frames may still sit in c's queue or
 * in a write: those release themselves). Callbacks may send, not on c. */
void ht_tr_pending_fail_all(ht_tr_conn *c, int status) {
  for (size_t i = 0; i < c->nbuckets; i++) {
    while (c->buckets != NULL && c->buckets[i] != NULL)
      ht_tr_out_settle(c->buckets[i], status, NULL, 0);
  }
}

void ht_tr_pending_free(ht_tr_conn *c) {
  free(c->buckets);
  c->buckets = NULL;
  c->nbuckets = 0;
}

/* --- deadline heap */

static void heap_set(ht_messenger *m, size_t i, ht_tr_out *o) {
  m->heap[i] = o;
  o->heap_index = i;
}

static void sift_up(ht_messenger *m, size_t i) {
  ht_tr_out *o = m->heap[i];
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (m->heap[parent]->deadline <= o->deadline)
      break;
    heap_set(m, i, m->heap[parent]);
    i = parent;
  }
  heap_set(m, i, o);
}

static void sift_down(ht_messenger *m, size_t i) {
  ht_tr_out *o = m->heap[i];
  for (;;) {
    size_t l = 2 * i + 1, best = i;
    uint64_t bd = o->deadline;
    if (l < m->heap_n && m->heap[l]->deadline < bd)
      best = l, bd = m->heap[l]->deadline;
    if (l + 1 < m->heap_n && m->heap[l + 1]->deadline < bd)
      best = l + 1;
    if (best == i)
      break;
    heap_set(m, i, m->heap[best]);
    i = best;
  }
  heap_set(m, i, o);
}

static void arm(ht_messenger *m) {
  if (m->heap_n == 0 || m->state == TR_CLOSING) {
    if (m->timer_due != UINT64_MAX)
      uv_timer_stop(&m->timeout_timer);
    m->timer_due = UINT64_MAX;
    return;
  }
  uint64_t due = m->heap[0]->deadline;
  if (due == m->timer_due)
    return;
  uint64_t now = uv_now(m->loop);
  uv_timer_start(&m->timeout_timer, ht_tr_timeouts_fire,
                 due > now ? due - now : 0, 0);
  m->timer_due = due;
}

int ht_tr_timeouts_add(ht_messenger *m, ht_tr_out *o) {
  if (m->heap_n == m->heap_cap) {
    size_t cap = m->heap_cap == 0 ? 256 : m->heap_cap * 2;
    ht_tr_out **nh = realloc(m->heap, cap * sizeof(*nh));
    if (nh == NULL)
      return HT_ENOMEM;
    m->heap = nh;
    m->heap_cap = cap;
  }
  o->deadline = uv_now(m->loop) + o->timeout_ms;
  m->heap[m->heap_n] = o;
  sift_up(m, m->heap_n++);
  if (o->heap_index == 0)
    arm(m);
  return 0;
}

void ht_tr_timeouts_remove(ht_messenger *m, ht_tr_out *o) {
  size_t i = o->heap_index;
  if (i == TR_NO_HEAP)
    return;
  o->heap_index = TR_NO_HEAP;
  ht_tr_out *last = m->heap[--m->heap_n];
  if (i < m->heap_n) {
    heap_set(m, i, last);
    sift_up(m, i);
    sift_down(m, last->heap_index);
  }
  /* The timer is re-armed lazily: an early fire just finds nothing due. */
}

void ht_tr_timeouts_fire(uv_timer_t *t) {
  ht_messenger *m = t->data;
  m->timer_due = UINT64_MAX;
  uint64_t now = uv_now(m->loop);
  while (m->heap_n > 0 && m->heap[0]->deadline <= now)
    ht_tr_out_settle(m->heap[0], HT_ETIMEDOUT, NULL, 0); /* write side goes on */
  arm(m);
}
