/* The names of the traced messenger's spans as recorder references
 * (span_quiet.h: ht_span_desc_ref, ht_span_peer_ref), remembered per
 * thread: a messenger names its spans with a handful of operations and
 * peers, and a hit costs a strlen and a compare (about 60 instructions)
 * where a lookup through the recorder's intern tables costs four calls,
 * a hash and three compares (about 450).
 * Included by traced_hooks.c only (its statics are its own).
 *
 * A reference is valid for the life of the process but only for the
 * recorder that gave it: each memo keeps that recorder and is used only
 * while it is the installed one. Text is compared in full (a name at a
 * reused address: a frame buffer, a freed connection's name). */
#ifndef HT_SHIM_TRACED_NAMES_H
#define HT_SHIM_TRACED_NAMES_H

#include <stdint.h>
#include <string.h>

#include "hoptrace/span.h"
#include "propagate/events.h"
#include "propagate/span_quiet.h"
#include "transport/hooks.h"

/* Longer names are looked up every time (still right, just slower). */
#define TS_MEMO_TEXT 40
/* Four-way sets: a messenger's names (a dozen for an OSD: its
 * operations as server and as client) and its peers (one per
 * connection) share sets without evicting each other, as one direct-
 * mapped slot for every name beginning with "osd_" did (a miss costs
 * about 450 instructions: half of an OSD's lookups missed). Every
 * thread of the process carries them: about 6.6 KiB. */
#define TS_WAYS 4
#define TS_DESC_SETS 16
#define TS_PEER_SETS 8

typedef struct ts_desc_memo {
  const ht_event_ops *ops; /* the recorder desc is from; NULL: empty */
  const void *desc;
  uint64_t owner;  /* the messenger (its service name) */
  uint32_t key;    /* ts_desc_key of kind and name: most misses end here */
  char name[TS_MEMO_TEXT];
} ts_desc_memo;

typedef struct ts_peer_memo {
  const ht_event_ops *ops;
  const void *peer;
  const char *at; /* where the text was: a connection's name stays put */
  char text[TS_MEMO_TEXT];
} ts_peer_memo;

static _Thread_local ts_desc_memo ts_descs[TS_DESC_SETS][TS_WAYS];
static _Thread_local ts_peer_memo ts_peers[TS_PEER_SETS][TS_WAYS];
static _Thread_local unsigned ts_victim; /* rotates over full sets */

/* The way a miss refills in a set of memos (`stride` bytes apart, each
 * beginning with its recorder): a free one, or one of another recorder,
 * while the set has it; entries in use are evicted only from a full set. */
static unsigned ts_refill_way(const void *set, size_t stride,
                              const ht_event_ops *ops) {
  for (unsigned w = 0; w < TS_WAYS; w++) {
    const ht_event_ops *const *way_ops =
        (const void *)((const char *)set + w * stride);
    if (*way_ops != ops)
      return w;
  }
  return ts_victim++ % TS_WAYS;
}

/* Kind, length, last and middle byte: names of one messenger differ in
 * at least one of them far more often than not (the text decides). */
static inline uint32_t ts_desc_key(ht_span_kind kind, const char *name,
                                   size_t n) {
  return (uint32_t)(n & 0xff) | (uint32_t)(unsigned char)name[n - (n > 0)] << 8 |
         (uint32_t)(unsigned char)name[n >> 1] << 16 | (uint32_t)kind << 24;
}

/* The set of a key or an address (Fibonacci hashing: the high bits of
 * the product mix every bit of the input). */
static inline unsigned ts_set(uint64_t x, unsigned sets) {
  return (unsigned)((x * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (sets - 1);
}

/* The lookups and the memos' refills, out of line: the hits stay short. */
__attribute__((noinline)) static const void *
ts_desc_miss(ts_desc_memo *set, const ht_event_ops *ops, const ht_span *span,
             uint64_t owner, const ht_span_info *info, const char *name,
             size_t n, uint32_t key) {
  const void *desc = ht_span_desc_ref(span, info);
  if (desc != NULL && n < TS_MEMO_TEXT && ht_events_current() == ops) {
    ts_desc_memo *m = &set[ts_refill_way(set, sizeof(*set), ops)];
    m->ops = ops;
    m->desc = desc;
    m->owner = owner;
    m->key = key;
    memcpy(m->name, name, n + 1);
  }
  return desc;
}

__attribute__((noinline)) static const void *
ts_peer_miss(ts_peer_memo *set, const ht_event_ops *ops, const ht_span *span,
             const char *peer) {
  const void *ref = ht_span_peer_ref(span, peer);
  size_t n = strlen(peer);
  if (ref != NULL && n < TS_MEMO_TEXT && ht_events_current() == ops) {
    ts_peer_memo *m = &set[ts_refill_way(set, sizeof(*set), ops)];
    m->ops = ops;
    m->peer = ref;
    m->at = peer;
    memcpy(m->text, peer, n + 1);
  }
  return ref;
}

/* As ht_span_desc_ref(span, info), info naming a span of messenger
 * `owner` (a number no other messenger of the process has: its service
 * name is fixed for its life). */
static const void *ts_desc_ref(const ht_span *span, uint64_t owner,
                               const ht_span_info *info) {
  if (!ht_span_writes_(span))
    return NULL;
  const ht_event_ops *ops = ht_events_current();
  const char *name = info->name != NULL ? info->name : "";
  size_t n = strlen(name);
  uint32_t key = ts_desc_key(info->kind, name, n);
  ts_desc_memo *set = ts_descs[ts_set(key, TS_DESC_SETS)];
  for (unsigned w = 0; w < TS_WAYS && n < TS_MEMO_TEXT; w++) {
    ts_desc_memo *m = &set[w]; /* n bounds the compare to m->name */
    if (m->key == key && m->ops == ops && ops != NULL && m->owner == owner &&
        memcmp(m->name, name, n + 1) == 0)
      return m->desc;
  }
  return ts_desc_miss(set, ops, span, owner, info, name, n, key);
}

/* As ht_span_peer_ref(span, peer). */
static const void *ts_peer_ref(const ht_span *span, const char *peer) {
  if (!ht_span_writes_(span) || peer == NULL || peer[0] == '\0')
    return NULL;
  const ht_event_ops *ops = ht_events_current();
  ts_peer_memo *set = ts_peers[ts_set((uintptr_t)peer, TS_PEER_SETS)];
  for (unsigned w = 0; w < TS_WAYS; w++) {
    ts_peer_memo *m = &set[w];
    if (m->at == peer && m->ops == ops && ops != NULL &&
        strcmp(m->text, peer) == 0)
      return m->peer;
  }
  return ts_peer_miss(set, ops, span, peer);
}

/* An incoming message's names, kept with its handler and connection (the
 * transport's words for the hooks, hooks.h ht_hook_memo: loop thread
 * only): a load and a compare, where even a memo hit above costs a strlen
 * and a compare. Words: the recorder, then the reference(s). */
enum { TS_MEMO_OPS, TS_MEMO_SERVER, TS_MEMO_CONSUMER };
enum { TS_MEMO_PEER = 1 };

/* As ts_desc_ref for a sampled span, info naming a server or consumer
 * span of the handler whose words `memo` are (NULL: none of its own, the
 * default handler's). */
static const void *ts_handler_desc_ref(const ht_span *span, uint64_t owner,
                                       const ht_span_info *info,
                                       ht_hook_memo *memo) {
  const ht_event_ops *ops = ht_events_current();
  unsigned k = info->kind == HT_SPAN_CONSUMER ? TS_MEMO_CONSUMER : TS_MEMO_SERVER;
  if (memo != NULL && memo->word[TS_MEMO_OPS] == ops && ops != NULL &&
      memo->word[k] != NULL)
    return memo->word[k];
  const void *desc = ts_desc_ref(span, owner, info);
  if (memo != NULL && desc != NULL && ops != NULL && ht_events_current() == ops) {
    if (memo->word[TS_MEMO_OPS] != ops)
      *memo = (ht_hook_memo){{ops, NULL, NULL}};
    memo->word[k] = desc;
  }
  return desc;
}

/* As ts_peer_ref for a sampled span, of the connection a message came on. */
static const void *ts_conn_peer_ref(const ht_span *span,
                                    const ht_hook_origin *from) {
  const ht_event_ops *ops = ht_events_current();
  ht_hook_memo *memo = from->conn_memo;
  if (memo->word[TS_MEMO_OPS] == ops && ops != NULL &&
      memo->word[TS_MEMO_PEER] != NULL)
    return memo->word[TS_MEMO_PEER];
  const void *ref = ts_peer_ref(span, from->peer);
  if (ref != NULL && ops != NULL && ht_events_current() == ops)
    *memo = (ht_hook_memo){{ops, ref, NULL}};
  return ref;
}

#endif /* HT_SHIM_TRACED_NAMES_H */
