/* The names of the traced messenger's spans as recorder references
 * (span_quiet.h: ht_span_desc_ref, ht_span_peer_ref), remembered per
 * thread: a messenger names its spans with a handful of operations and
 * peers, and a hit costs one string compare where a lookup through the
 * recorder's intern tables costs four calls and three compares.
 * Included by traced_messenger.c only (its statics are its own).
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

/* Longer names are looked up every time (still right, just slower). */
#define TS_MEMO_TEXT 40

typedef struct ts_desc_memo {
  const ht_event_ops *ops; /* the recorder desc is from; NULL: empty */
  const void *desc;
  uint64_t owner; /* the messenger (its service name) */
  ht_span_kind kind;
  char name[TS_MEMO_TEXT];
} ts_desc_memo;

typedef struct ts_peer_memo {
  const ht_event_ops *ops;
  const void *peer;
  char text[TS_MEMO_TEXT];
} ts_peer_memo;

/* By kind (client, server, producer, consumer: distinct in their low
 * two bits) and the name's first byte; by the peer text's address. */
static _Thread_local ts_desc_memo ts_descs[16];
static _Thread_local ts_peer_memo ts_peers[4];

/* The lookups and the memos' refills, out of line: the hits stay short. */
__attribute__((noinline)) static const void *
ts_desc_miss(ts_desc_memo *m, const ht_event_ops *ops, const ht_span *span,
             uint64_t owner, const ht_span_info *info, const char *name) {
  const void *desc = ht_span_desc_ref(span, info);
  size_t n = strlen(name);
  if (desc != NULL && n < sizeof(m->name) && ht_events_current() == ops) {
    m->ops = ops;
    m->desc = desc;
    m->owner = owner;
    m->kind = info->kind;
    memcpy(m->name, name, n + 1);
  }
  return desc;
}

__attribute__((noinline)) static const void *
ts_peer_miss(ts_peer_memo *m, const ht_event_ops *ops, const ht_span *span,
             const char *peer) {
  const void *ref = ht_span_peer_ref(span, peer);
  size_t n = strlen(peer);
  if (ref != NULL && n < sizeof(m->text) && ht_events_current() == ops) {
    m->ops = ops;
    m->peer = ref;
    memcpy(m->text, peer, n + 1);
  }
  return ref;
}

/* As ht_span_desc_ref(span, info), info naming a span of messenger
 * `owner` (a number no other messenger of the process has: its service
 * name is fixed for its life). */
static const void *ts_desc_ref(const ht_span *span, uint64_t owner,
                               const ht_span_info *info) {
  if (!ht_span_is_sampled(span))
    return NULL;
  const ht_event_ops *ops = ht_events_current();
  const char *name = info->name != NULL ? info->name : "";
  ts_desc_memo *m = &ts_descs[((unsigned)info->kind & 3u) << 2 |
                              ((unsigned char)name[0] & 3u)];
  if (m->ops == ops && ops != NULL && m->owner == owner &&
      m->kind == info->kind && strcmp(m->name, name) == 0)
    return m->desc;
  return ts_desc_miss(m, ops, span, owner, info, name);
}

/* As ht_span_peer_ref(span, peer). */
static const void *ts_peer_ref(const ht_span *span, const char *peer) {
  if (!ht_span_is_sampled(span) || peer == NULL || peer[0] == '\0')
    return NULL;
  const ht_event_ops *ops = ht_events_current();
  ts_peer_memo *m = &ts_peers[((uintptr_t)peer >> 4) & 3u];
  if (m->ops == ops && ops != NULL && strcmp(m->text, peer) == 0)
    return m->peer;
  return ts_peer_miss(m, ops, span, peer);
}

#endif /* HT_SHIM_TRACED_NAMES_H */
