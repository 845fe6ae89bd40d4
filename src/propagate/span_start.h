/* The body of every span start, inline: span.c's ht_span_start_* and the
 * quiet starts of span_quiet.h (one per message in the traced messenger,
 * where a call and its saved registers cost as much as the start).
 * Internal to libhoptrace. */
#ifndef HT_PROPAGATE_SPAN_START_H
#define HT_PROPAGATE_SPAN_START_H

#include <stdint.h>

#include "hoptrace/span.h"
#include "propagate/active.h"
#include "propagate/events.h"
#include "propagate/flight.h"
#include "propagate/ids_impl.h"

/* state_: started and not finished; and, decided at the start, written
 * (events.h recording): a span is written whole or not at all. A written
 * span API span (HT_SPAN_API) also keeps its kind's boundary annotations
 * (span.c: a client's "cs"/"cr", a server's "sr"/"ss" are its start and
 * end; START_MARKED/END_MARKED say which it was given, their values the
 * HT_SIDE_*_FRAME it reports shifted by HT_SPAN_FRAMES_SHIFT). */
enum {
  HT_SPAN_LIVE = 1,
  HT_SPAN_WRITES = 2,
  HT_SPAN_CALLS = 4, /* a probe watched at its start (events.h watched) */
  HT_SPAN_CLIENT_SIDE = 8,
  HT_SPAN_SERVER_SIDE = 16,
  HT_SPAN_KV = 32,          /* kv_key_ and kv_value_ hold its key-value */
  HT_SPAN_MARKS_APART = 64, /* a mark not at its start or end, or one given
                               twice: its marks need span_a */
  HT_SPAN_START_MARKED = 128,
  HT_SPAN_END_MARKED = 256,
  HT_SPAN_API = 512 /* started by span.c, which names it */
};
#define HT_SPAN_FRAMES_SHIFT 7
_Static_assert(HT_SPAN_START_MARKED == HT_SIDE_START_FRAME << HT_SPAN_FRAMES_SHIFT &&
                   HT_SPAN_END_MARKED == HT_SIDE_END_FRAME << HT_SPAN_FRAMES_SHIFT,
               "a span's marked ends are its frames");

/* Inlined even where the compiler would rather call: the call is the cost. */
#define HT_SPAN_INLINE __attribute__((always_inline)) static inline

/* A live span of these ids and flags; returns the recorder when the span
 * is written, else NULL (what span.c's begin names it with). Only a
 * written span's other fields are ever read (span.c reads them behind
 * its recorder check, which tests the flags first): an unsampled one gets
 * its ids only, and the public starts (span.c begin) set its state, which
 * ht_span_set_error reads; a sampled one that no session records gets its
 * state and status. */
HT_SPAN_INLINE const ht_event_ops *ht_span_set_(ht_span *span, uint64_t hi,
                                               uint64_t lo, uint64_t id,
                                               uint64_t parent, uint32_t flags,
                                               uint64_t prob) {
  span->ctx = (ht_trace_context){hi, lo, id, parent, flags};
  if (__builtin_expect(!(flags & HT_FLAG_RECORDS), 1))
    return NULL;
  span->status_ = 0;
  const ht_event_ops *ops = ht_events_current();
  int rec = ht_events_recording(ops);
  if (!rec) {
    span->state_ = HT_SPAN_LIVE;
    return NULL;
  }
  span->state_ = HT_SPAN_LIVE | HT_SPAN_WRITES;
  span->start_ = 0;
  span->prob_ = prob; /* desc_ and marks_: only span.c's begin needs them */
  return ops;
}

/* 1 when the span, started by a start of this file, is written when it
 * finishes (the flags first: an unsampled span's state is unset). */
HT_SPAN_INLINE int ht_span_writes_(const ht_span *span) {
  return (span->ctx.flags & HT_FLAG_RECORDS) &&
         (span->state_ & (HT_SPAN_LIVE | HT_SPAN_WRITES)) ==
             (HT_SPAN_LIVE | HT_SPAN_WRITES);
}

/* A root of a new trace; the sampler decides unless hint does. Its span
 * id is its trace id's low half (B3/Zipkin's 64-bit roots): one draw
 * less, and unique as the trace is. */
HT_SPAN_INLINE const ht_event_ops *ht_span_root_(ht_span *span,
                                                ht_sample_hint hint) {
  uint64_t w[2]; /* trace id hi, lo */
  ht_ids_draw(ht_ids_state(), w, 2);
  w[1] = ht_ids_nonzero(w[1]);
  ht_root_decision d = ht_active_decide_root(w[0], w[1], hint);
  return ht_span_set_(span, w[0], w[1], w[1], 0, d.flags | ht_flight_flag(),
                      d.prob);
}

/* A child of parent (a local or a remote context) with these flags. */
HT_SPAN_INLINE const ht_event_ops *ht_span_child_(ht_span *span,
                                                 const ht_trace_context *parent,
                                                 uint32_t flags) {
  uint64_t id;
  ht_ids_draw(ht_ids_state(), &id, 1);
  return ht_span_set_(span, parent->trace_id_hi, parent->trace_id_lo,
                      ht_ids_nonzero(id), parent->span_id,
                      flags | ht_flight_flag(), 0);
}

/* A child of a remote context: the local policy decides, and a remote
 * RECORDED counts only in flight mode (ht_span_child_ adds it then). */
HT_SPAN_INLINE const ht_event_ops *ht_span_remote_(ht_span *span,
                                                  const ht_trace_context *remote) {
  return ht_span_child_(span, remote,
                 ht_active_decide_remote(remote->trace_id_hi, remote->trace_id_lo,
                                         remote->flags) &
                     ~HT_FLAG_RECORDED);
}

#endif /* HT_PROPAGATE_SPAN_START_H */
