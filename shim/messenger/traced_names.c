/* The names of the traced messenger's spans as recorder references
 * (traced_names.h): per-thread memos of a messenger's operations and
 * peers, and the words the transport keeps with each handler and
 * connection. Out of line: inlined into traced_hooks.c (as a header of
 * static functions and thread-locals) it measured the same within noise
 * (bench/recording, callgrind, absolute per hop: traced messenger + kv
 * recorded 8,758 inline, 8,749 here; no session 5,583 and 5,593; the
 * plain row moved by 16 between those runs). A hit is a call, a strlen
 * and a compare; a miss goes through the recorder's intern tables
 * (about 450 instructions).
 *
 * A reference is valid for the life of the process but only for the
 * recorder that gave it: each memo keeps that recorder and is used only
 * while it is the installed one. Text is compared in full (a name at a
 * reused address: a frame buffer, a freed connection's name). */
#include "messenger/traced_names.h"

#include <stdint.h>
#include <string.h>

#include "propagate/events.h"
#include "propagate/span_path.h"

/* Longer names are looked up every time (still right, just slower). */
#define TS_MEMO_TEXT 40
/* Four-way sets: a messenger's names (a dozen for an OSD: its
 * operations as server and as client) and its peers (one per
 * connection) share sets without evicting each other, as one direct-
 * mapped slot for every name beginning with "osd_" did (a miss costs
 * about 450 instructions: half of an OSD's lookups missed). Every
 * thread of the process carries them: about 6.6 KiB (and 3 KiB for
 * the calls' memo below). */
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

const void *ht_shim_desc_ref(const ht_span *span, uint64_t owner,
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

const void *ht_shim_peer_ref(const ht_span *span, const char *peer) {
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

/* A call's names (ht_shim_client_refs): its operation stays where it
 * was (a literal, say) call after call, and its peer is the same peer,
 * named by a serial no other peer ever has (hooks.h ht_hook_peer), so a
 * set chosen by the address and the serial finds both with one compare
 * of text (the operation's: an address may be reused), where the two
 * memos above cost a strlen, a key, a memcmp and a strcmp in two calls
 * (bench/recording: traced messenger + kv recorded 3,872 -> 3,767 above
 * plain; the peer's strcmp cost about 20 more). A miss takes those
 * memos, which find a name wherever it is. */
#define TS_CALL_SETS 8

typedef struct ts_call_memo {
  const ht_event_ops *ops; /* NULL: empty */
  const void *desc, *peer;
  uint64_t owner, peer_serial;
  const char *op_at;
  ht_span_kind kind;
  char op[TS_MEMO_TEXT];
} ts_call_memo;

static _Thread_local ts_call_memo ts_calls[TS_CALL_SETS][TS_WAYS];

__attribute__((noinline)) static void
ts_call_miss(ts_call_memo *set, const ht_event_ops *ops, const ht_span *span,
             uint64_t owner, const ht_span_info *info, const ht_hook_peer *to,
             const void **desc, const void **peer_ref) {
  const char *peer = to->url != NULL ? to->url : "";
  *desc = ht_shim_desc_ref(span, owner, info);
  *peer_ref = ht_shim_peer_ref(span, peer);
  size_t n = strlen(info->name);
  if (*desc == NULL || (*peer_ref == NULL && peer[0] != '\0') ||
      n >= TS_MEMO_TEXT || ops == NULL || ht_events_current() != ops)
    return;
  ts_call_memo *m = &set[ts_refill_way(set, sizeof(*set), ops)];
  *m = (ts_call_memo){ops, *desc, *peer_ref, owner, to->serial, info->name, info->kind, ""};
  memcpy(m->op, info->name, n + 1);
}

void ht_shim_client_refs(const ht_span *span, uint64_t owner,
                         const ht_span_info *info, const ht_hook_peer *to,
                         const void **desc, const void **peer_ref) {
  const ht_event_ops *ops = ht_events_current();
  const char *op = info->name;
  uint64_t serial = to->serial;
  ts_call_memo *set =
      ts_calls[ts_set((uintptr_t)op ^ (serial << 1), TS_CALL_SETS)];
  for (unsigned w = 0; w < TS_WAYS; w++) {
    ts_call_memo *m = &set[w];
    if (m->op_at == op && m->peer_serial == serial && m->ops == ops &&
        ops != NULL && m->owner == owner && m->kind == info->kind &&
        strcmp(m->op, op) == 0) {
      *desc = m->desc;
      *peer_ref = m->peer;
      return;
    }
  }
  ts_call_miss(set, ops, span, owner, info, to, desc, peer_ref);
}

/* ts_words (traced_names.h): the recorder, then the reference(s). */
enum { TS_MEMO_OPS, TS_MEMO_SERVER, TS_MEMO_CONSUMER };
enum { TS_MEMO_PEER = 1 };

const void *ht_shim_handler_desc_ref(const ht_span *span, uint64_t owner,
                                     const ht_span_info *info,
                                     ts_words *memo) {
  const ht_event_ops *ops = ht_events_current();
  unsigned k = info->kind == HT_SPAN_CONSUMER ? TS_MEMO_CONSUMER : TS_MEMO_SERVER;
  if (memo != NULL && memo->word[TS_MEMO_OPS] == ops && ops != NULL &&
      memo->word[k] != NULL)
    return memo->word[k];
  const void *desc = ht_shim_desc_ref(span, owner, info);
  if (memo != NULL && desc != NULL && ops != NULL && ht_events_current() == ops) {
    if (memo->word[TS_MEMO_OPS] != ops)
      *memo = (ts_words){{ops, NULL, NULL}};
    memo->word[k] = desc;
  }
  return desc;
}

/* Out of line, so that the hit below calls nothing and saves no
 * registers (14 instructions a call when it did). */
__attribute__((noinline)) static void
ts_server_miss(const ht_span *span, uint64_t owner, const ht_span_info *info,
               const ht_hook_origin *from, const void **desc,
               const void **peer_ref) {
  *peer_ref = ht_shim_conn_peer_ref(span, from);
  *desc = ht_shim_handler_desc_ref(span, owner, info, from->handler);
}

void ht_shim_server_refs(const ht_span *span, uint64_t owner,
                         const ht_span_info *info, const ht_hook_origin *from,
                         const void **desc, const void **peer_ref) {
  const ht_event_ops *ops = ht_events_current();
  const ts_words *h = from->handler, *c = from->conn;
  unsigned k = info->kind == HT_SPAN_CONSUMER ? TS_MEMO_CONSUMER : TS_MEMO_SERVER;
  /* words are kept only with a recorder (ops not NULL): a reference that
   * is not NULL is one of ops' */
  if (h != NULL) {
    if (c != NULL) {
      const void *d = h->word[k], *p = c->word[TS_MEMO_PEER];
      if (h->word[TS_MEMO_OPS] == ops && c->word[TS_MEMO_OPS] == ops &&
          d != NULL && p != NULL) {
        *desc = d;
        *peer_ref = p;
        return;
      }
    }
  }
  ts_server_miss(span, owner, info, from, desc, peer_ref);
}

const void *ht_shim_conn_peer_ref(const ht_span *span,
                                  const ht_hook_origin *from) {
  const ht_event_ops *ops = ht_events_current();
  ts_words *memo = from->conn; /* NULL: no memory for it */
  if (memo != NULL && memo->word[TS_MEMO_OPS] == ops && ops != NULL &&
      memo->word[TS_MEMO_PEER] != NULL)
    return memo->word[TS_MEMO_PEER];
  const void *ref = ht_shim_peer_ref(span, from->peer);
  if (memo != NULL && ref != NULL && ops != NULL && ht_events_current() == ops)
    *memo = (ts_words){{ops, ref, NULL}};
  return ref;
}
