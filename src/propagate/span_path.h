/* What libhoptrace inlines on a message's path, in one place: each part
 * below is inline because a call (and the registers it saves) cost about
 * as much as the part itself, on a path taken once or more per message.
 * The instruction figures that justified them (callgrind, bench/messenger
 * and bench/recording, per request or hop):
 *   1. the installed recorder, read by every sampled span start;
 *   2. the clock-free samplers' decisions, from one published word (no
 *      call, no sequence check), and
 *   3. the per-thread id generator, one thread-state test per span:
 *      together with 5, a request 4,644 -> 4,432 instructions (f7be640);
 *   4. flight mode's flag, one relaxed load per span start;
 *   5. the thread's current context and per-message sampling hint, read
 *      and set by the traced messenger for every message (one block of
 *      thread state: +569 -> +550 above plain a request, 99291f3);
 *   6. the body of every span start (span.c's ht_span_start_* and the
 *      quiet starts): an unsampled request +707 -> +566 above plain when
 *      the starts moved inline into the messenger's hooks (5ef3950);
 *   7. the traced messenger's quiet starts and its one-event span end.
 * The other inline code on a message's path lives with the data it works
 * on, in the layer that owns it: src/wire/wire_bytes.h (the envelope
 * codec's bytes) and arena.h (the decoder's bump allocator: no malloc a
 * message), src/transport/fire.h (when each hook fires, one helper a
 * hook) and internal.h (a request's storage), src/common/counters.h (a
 * counter add: one add to memory), spin.h (the lock of a few stores) and
 * context_check.h (a context's validity, shared with
 * ht_context_validate), shim/recording/intern.h (a name's epoch check),
 * shim/messenger/traced_capture.h (the capture triggers' armed flag: one
 * load a finished span), and the public include/hoptrace/span.h
 * (ht_span_init, ht_span_is_sampled). Every thread-local they read is
 * declared with src/common/tls_hot.h's initial-exec model (macros only):
 * libhoptrace.so made 18 __tls_get_addr calls a request without it
 * (5ef3950). Internal to libhoptrace. */
#ifndef HT_PROPAGATE_SPAN_PATH_H
#define HT_PROPAGATE_SPAN_PATH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "hoptrace/context.h"
#include "hoptrace/sampler.h"
#include "hoptrace/span.h"
#include "common/context_check.h"
#include "common/counters.h"
#include "common/tls_hot.h"
#include "propagate/active.h"
#include "propagate/events.h"
#include "propagate/sampler_impl.h"

/* 1. The installed recorder ----------------------------------------- */

/* The installed table, or NULL. */
static inline const ht_event_ops *ht_events_current(void) {
  return atomic_load_explicit(&ht_events_installed_, memory_order_acquire);
}

/* Whether a span starting now is written by ops, the installed table
 * (the `recording` hook). */
static inline int ht_events_recording(const ht_event_ops *ops) {
  return ops != NULL && (ops->recording == NULL || ops->recording());
}

/* 2. Sampling decisions ---------------------------------------------- */

/* 1 or 0 for a plain mode, -1 for STATEFUL. flags: the remote flags. */
static inline int ht_plain_decide(unsigned mode, uint64_t threshold,
                                  uint64_t hi, uint64_t lo, uint32_t flags) {
  switch (mode) {
  case HT_PLAIN_NEVER: return 0;
  case HT_PLAIN_ALWAYS: return 1;
  case HT_PLAIN_RATIO: return ht_trace_id_hash(hi, lo) < threshold;
  case HT_PLAIN_PARENT: return (flags & HT_FLAG_SAMPLED) != 0;
  default: return -1;
  }
}

/* A root decision's probability by plain mode (ht_sampler_root_probability):
 * RATIO's threshold / 2^64 rounded to 2^-32 (never 0 for a non-zero one). */
static inline uint64_t ht_plain_prob(unsigned mode, uint64_t threshold) {
  if (mode == HT_PLAIN_ALWAYS)
    return HT_SAMPLE_P_ONE;
  if (mode != HT_PLAIN_RATIO || threshold == 0)
    return 0;
  uint64_t p = (threshold >> 32) + ((threshold >> 31) & 1);
  return p != 0 ? p : 1;
}

/* What a clock-free sampler decides, published by active.c as one word
 * (sampler_impl.h HT_FAST_*: threshold and both modes), so a reader needs
 * one load and no sequence check. 0 (STATEFUL) before the first
 * configuration: the slow path, which makes one. */
extern HT_HOT_DATA _Atomic uint64_t ht_active_fast;

static inline uint64_t ht_active_fast_word(void) {
  return atomic_load_explicit(&ht_active_fast, memory_order_relaxed);
}

static inline ht_root_decision ht_active_decide_root(uint64_t hi, uint64_t lo,
                                                     ht_sample_hint hint) {
  if (hint == HT_SAMPLE_DEFAULT) {
    uint64_t w = ht_active_fast_word();
    int yes = ht_plain_decide(HT_FAST_ROOT(w), HT_FAST_THRESHOLD(w), hi, lo, 0);
    if (yes >= 0) {
      ht_counter_add(yes ? HT_CTR_ROOT_SAMPLED : HT_CTR_ROOT_DROPPED, 1);
      return (ht_root_decision){
          yes ? ht_plain_prob(HT_FAST_ROOT(w), HT_FAST_THRESHOLD(w)) : 0,
          yes ? HT_FLAG_SAMPLED : 0};
    }
  }
  return ht_active_decide_root_slow(hi, lo, hint);
}

static inline uint32_t ht_active_decide_remote(uint64_t hi, uint64_t lo,
                                               uint32_t flags) {
  if (!(flags & HT_FLAG_DEBUG)) {
    uint64_t w = ht_active_fast_word();
    int yes = ht_plain_decide(HT_FAST_REMOTE(w), HT_FAST_THRESHOLD(w), hi, lo,
                              flags);
    if (yes >= 0) {
      ht_counter_add(yes ? HT_CTR_REMOTE_SAMPLED : HT_CTR_REMOTE_DROPPED, 1);
      return (flags & ~HT_DECISION_FLAGS) | (yes ? HT_FLAG_SAMPLED : 0u);
    }
  }
  return ht_active_decide_remote_slow(hi, lo, flags);
}

/* 3. Ids --------------------------------------------------------------- */

typedef struct ht_id_state {
  uint64_t s[4];
  bool seeded; /* false: never, or the thread forked since (ids.c) */
} ht_id_state;

extern HT_TLS_HOT ht_id_state ht_ids_mine_;
void ht_ids_reseed(ht_id_state *st);

/* The calling thread's generator, seeded for this process. */
static inline ht_id_state *ht_ids_state(void) {
  ht_id_state *st = &ht_ids_mine_;
  if (__builtin_expect(!st->seeded, 0))
    ht_ids_reseed(st);
  return st;
}

static inline uint64_t ht_ids_rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

/* n draws into out, the state loaded and stored once (in registers
 * between draws). */
static inline void ht_ids_draw(ht_id_state *st, uint64_t *out, unsigned n) {
  uint64_t s0 = st->s[0], s1 = st->s[1], s2 = st->s[2], s3 = st->s[3];
#pragma GCC unroll 3 /* n is a constant at every call */
  for (unsigned i = 0; i < n; i++) {
    out[i] = ht_ids_rotl(s1 * 5, 7) * 9;
    const uint64_t t = s1 << 17;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = ht_ids_rotl(s3, 45);
  }
  st->s[0] = s0;
  st->s[1] = s1;
  st->s[2] = s2;
  st->s[3] = s3;
}

/* A draw as a span id or a trace id's low half, which are never 0: 0
 * (one draw in 2^64) becomes 1, no retry loop to keep the state in
 * memory for. */
static inline uint64_t ht_ids_nonzero(uint64_t x) { return x != 0 ? x : 1; }

/* 4. Flight mode (include/hoptrace/capture.h): whether every span this
 * process starts records in memory; written by ht_flight_set. */

/* The flags under which a span records its events: kept, or recorded for
 * the flight recorder. */
#define HT_FLAG_RECORDS (HT_FLAG_SAMPLED | HT_FLAG_RECORDED)

/* HT_FLAG_RECORDED in flight mode, else 0. */
extern HT_HOT_DATA _Atomic uint32_t ht_flight_flag_;

static inline uint32_t ht_flight_flag(void) {
  return atomic_load_explicit(&ht_flight_flag_, memory_order_relaxed);
}

/* 5. The current context ------------------------------------------- */

/* current.c's thread state, in one block so that a function using
 * several of its fields finds the block once: the context is read only
 * while has. */
typedef struct ht_current_state {
  ht_trace_context ctx;
  bool has;
  bool writes;   /* ctx's span is written: what is added to it is recorded */
  unsigned hint; /* an ht_sample_hint, | HT_HINT_KVS */
} ht_current_state;

/* In the hint word: key-values wait for the next call (ht_next_call_kv_*),
 * so that a send finds out with the one load it makes for the hint. */
#define HT_HINT_KVS 0x100u
#define HT_HINT_SAMPLE(word) ((ht_sample_hint)((word) & 0xffu))

extern HT_TLS_HOT ht_current_state ht_current_;

/* The thread's current context; false when there is none. */
static inline bool ht_current_get(ht_trace_context *out) {
  if (ht_current_.has)
    *out = ht_current_.ctx;
  return ht_current_.has;
}

/* Sets (ctx valid) or clears (ctx NULL) the current context, and whether
 * its span is written (a span decides at its start: a key-value added
 * through the context of a span that is not must not be recorded). */
static inline void ht_current_set_span(const ht_trace_context *ctx, bool writes) {
  if (ctx != NULL)
    ht_current_.ctx = *ctx;
  ht_current_.has = ctx != NULL;
  ht_current_.writes = writes;
}

/* An application's context (ht_context_restore): its span is not known
 * here, so its sampled flag says whether it is written. */
static inline void ht_current_set(const ht_trace_context *ctx) {
  ht_current_set_span(ctx, ctx != NULL && (ctx->flags & HT_FLAG_RECORDS));
}

/* Whether the current context's span is written. */
static inline bool ht_current_writes(void) {
  return ht_current_.has && ht_current_.writes;
}

/* Takes the pending per-message hint word (and resets it to DEFAULT). */
static inline unsigned ht_current_take_hint(void) {
  unsigned h = ht_current_.hint;
  ht_current_.hint = HT_SAMPLE_DEFAULT;
  return h;
}

/* 6. Span starts ----------------------------------------------------- */

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
 * RECORDED counts only in flight mode (ht_span_child_ adds it then). A
 * remote CAPTURE is the caller's word, read from its envelope (traced
 * messenger): not inherited, or the span's calls and reply would pass
 * it on though this process refused the capture (past a rate). */
HT_SPAN_INLINE const ht_event_ops *ht_span_remote_(ht_span *span,
                                                  const ht_trace_context *remote) {
  return ht_span_child_(span, remote,
                 ht_active_decide_remote(remote->trace_id_hi, remote->trace_id_lo,
                                         remote->flags) &
                     ~(HT_FLAG_RECORDED | HT_FLAG_CAPTURE));
}

/* 7. Quiet starts and the one-event span end --------------------------- */

/* Inline: the traced messenger starts one per message, and a call costs
 * about what the start does. Return 0, or (a context that is not valid)
 * HT_EBADCONTEXT with the span zeroed; span must not be NULL. An unsampled
 * quiet span gets its ids only (6 above): read its ctx, ask
 * ht_span_is_sampled, and give it to no other ht_span_* function. */
HT_SPAN_INLINE int ht_span_start_root_quiet(ht_span *span,
                                           ht_sample_hint hint) {
  ht_span_root_(span, hint);
  return 0;
}

HT_SPAN_INLINE int ht_span_start_local_quiet(ht_span *span,
                                            const ht_trace_context *ctx) {
  int rc = ht_context_check(ctx);
  if (__builtin_expect(rc != 0, 0)) {
    memset(span, 0, sizeof(*span));
    return rc;
  }
  ht_span_child_(span, ctx, ctx->flags);
  return 0;
}

HT_SPAN_INLINE int ht_span_start_remote_quiet(ht_span *span,
                                             const ht_trace_context *remote) {
  int rc = ht_context_check(remote);
  if (__builtin_expect(rc != 0, 0)) {
    memset(span, 0, sizeof(*span));
    return rc;
  }
  ht_span_remote_(span, remote);
  return 0;
}

/* Ends the span like ht_span_finish, recording it as one span side
 * (events.h): started at start (ht_clock_now), named by desc (from
 * ht_span_desc_ref) or, when that is NULL, by info (strings may be NULL),
 * with the peer from ht_span_peer_ref (may be NULL); frames: which of
 * its ends were a frame (events.h HT_SIDE_*_FRAME); kv_key (a valid
 * key, or NULL) and kv_value: one integer key-value written in the same
 * event. */
void ht_span_finish_side_kv(ht_span *span, const void *desc,
                            const ht_span_info *info, uint64_t start,
                            const void *peer, uint8_t frames,
                            const char *kv_key, int64_t kv_value);

static inline void ht_span_finish_side(ht_span *span, const void *desc,
                                       const ht_span_info *info, uint64_t start,
                                       const void *peer, uint8_t frames) {
  ht_span_finish_side_kv(span, desc, info, start, peer, frames, NULL, 0);
}

/* References to the span's names and to a peer's name, valid for the rest
 * of the process, for ht_span_finish_side; NULL when the span records
 * nothing or no reference can be kept (then keep the strings). */
const void *ht_span_desc_ref(const ht_span *span, const ht_span_info *info);
const void *ht_span_peer_ref(const ht_span *span, const char *peer);

/* A message sent (dir 0) or received (1) on behalf of ctx when no span is
 * at hand, and the annotation it makes ("cs", "sr", "ss", "cr"): recorded
 * when ctx is sampled. Strings may be NULL. */
void ht_context_record_frame(const ht_trace_context *ctx, int dir,
                             const char *annotation, uint32_t type,
                             uint64_t seq, uint64_t size, const char *peer);

#endif /* HT_PROPAGATE_SPAN_PATH_H */
