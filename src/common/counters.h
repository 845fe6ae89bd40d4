/* The process-wide counters of every layer, in one mechanism: each thread
 * adds to a block of its own (no shared cache line, no atomic
 * read-modify-write on the hot path); a read sums the live blocks and
 * what exited threads left. Internal to libhoptrace. */
#ifndef HT_COMMON_COUNTERS_H
#define HT_COMMON_COUNTERS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "common/tls_hot.h"

typedef enum ht_counter {
  /* propagate: sampling decisions (started/received are sums) */
  HT_CTR_ROOT_SAMPLED,
  HT_CTR_ROOT_DROPPED,
  HT_CTR_REMOTE_SAMPLED,
  HT_CTR_REMOTE_DROPPED,
  HT_CTR_DEBUG_FORCED,
  HT_CTR_DEBUG_HONOURED,
  HT_CTR_DEBUG_REFUSED,
  HT_CTR_CONFIG_CHANGES,
  /* the traced messenger's messages: frames and bytes counted by the
   * transport for it (hooks.h count_frames), the rest by shim/ */
  HT_CTR_MSGS_SENT,
  HT_CTR_MSGS_RECEIVED,
  HT_CTR_BYTES_SENT,
  HT_CTR_BYTES_RECEIVED,
  HT_CTR_MSGS_SENT_SAMPLED,
  HT_CTR_MSGS_RECEIVED_SAMPLED,
  HT_CTR_REQUESTS_FAILED,
  HT_CTR_KVS_DROPPED,   /* application key-values past a span's bound */
  HT_CTR_KVS_TRUNCATED, /* string values cut at their bound */
  HT_CTR_CAPTURES_FIRED, /* flight-recorder triggers of this process */
  HT_CTR_CAPTURES_UNRECORDED, /* ... that found no session recording them */
  HT_CTR_NOTICES_SENT,     /* capture notices sent to peers called */
  HT_CTR_NOTICES_DROPPED,  /* ... not sent (rate, hops, queue full, peer gone) */
  HT_CTR_NOTICES_RECEIVED, /* capture notices and reply flags honoured */
  HT_CTR_NOTICES_REFUSED,  /* ... refused: a trace not ours, past a rate, bad hops */
  HT_CTR_CAPTURES_LIMITED, /* triggers past the process's capture rate */
  HT_CTR_CRUMB_PEERS_DROPPED, /* calls whose peer the breadcrumbs could not keep */
  HT_CTR_COUNT
} ht_counter;

/* A thread's counters: written by that thread only, read by anyone. */
typedef struct ht_counter_block {
  _Alignas(64) atomic_uint_fast64_t v[HT_CTR_COUNT];
  struct ht_counter_block *prev, *next;
} ht_counter_block;

/* The calling thread's block; NULL until its first add (or when it
 * could not be allocated: every add then takes the slow path). */
extern HT_TLS_HOT ht_counter_block *ht_counter_mine;

/* The first add of a thread, or every add of one without a block. */
void ht_counter_add_slow(ht_counter c, uint64_t n);
void ht_counter_add2_slow(ht_counter a, uint64_t na, ht_counter b,
                          uint64_t nb);

/* Adds n to a counter only the calling thread writes. Readers on other
 * threads load it relaxed and must see the value before or after, never
 * a torn one. On x86-64 that is one add to memory (an aligned 8-byte
 * access is single-copy atomic there): a relaxed load and store compile
 * to three instructions, and the traced messenger adds two counters on
 * every frame. Elsewhere, the relaxed load and store. */
static inline void ht_counter_bump_(atomic_uint_fast64_t *v, uint64_t n) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  _Static_assert(sizeof(*v) == 8, "a counter is one 8-byte word");
  __asm__("addq %1, %0" : "+m"(*(volatile uint64_t *)v) : "er"(n));
#else
  atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + n,
                        memory_order_relaxed);
#endif
}

/* Adds n to the calling thread's counter c: inline, one add to memory
 * once the thread has its block (its first call allocates it). */
static inline void ht_counter_add(ht_counter c, uint64_t n) {
  ht_counter_block *b = ht_counter_mine;
  if (__builtin_expect(b == NULL, 0)) {
    ht_counter_add_slow(c, n);
    return;
  }
  ht_counter_bump_(&b->v[c], n);
}

/* Two counters at once (the block looked up once). */
static inline void ht_counter_add2(ht_counter a, uint64_t na, ht_counter b,
                                   uint64_t nb) {
  ht_counter_block *blk = ht_counter_mine;
  if (__builtin_expect(blk == NULL, 0)) {
    ht_counter_add2_slow(a, na, b, nb); /* one call: no registers kept */
    return;
  }
  ht_counter_bump_(&blk->v[a], na);
  ht_counter_bump_(&blk->v[b], nb);
}

/* Sums of counters first..first+n-1 into out[0..n-1] (a consistent view
 * per counter, not across counters). */
void ht_counters_read(ht_counter first, int n, uint64_t *out);

#endif /* HT_COMMON_COUNTERS_H */
