/* The traced messenger: the transport's hook table filled with spans.
 * Client side: before_encode starts a client span (root or child of the
 * thread's current context), stamps the envelope and looks up its names
 * (operation and peer); on_message(SEND) notes its start ("cs": the
 * frame went out); on_reply records the error if any and the whole span
 * in one event, ending at "cr".
 * Server side: before_dispatch continues the sender's trace in a server
 * span started at "sr" and makes it the current context while the handler
 * runs; the transport stamps it into the reply, and request_done records
 * it in one event, ending at "ss" (the reply was encoded just before, on
 * the same thread). The transport counts frames and bytes (hooks.h
 * count_frames). Below, "sampled" means written: sampled, and recorded
 * by a session when the span started (span_path.h ht_span_writes_); a
 * sampled span no session records goes the unsampled way, its ids
 * propagated (SAMPLED still set), nothing looked up, no clock read.
 * An unsampled request keeps no slot on either side, so
 * it passes four hook calls (before_encode, before_dispatch,
 * after_dispatch, and on_reply only if it fails), a sampled one six
 * (seven while a capture trigger is set: before_reply, behind its gate).
 * 2 events per sampled request and reply (schema 3,
 * src/provider/hoptrace_schema.h), one per one-way side; the error
 * paths' details (status message, error kv) are `error` and `tag_*`
 * events before the span's.
 *
 * The state and the slot: traced_state.h; set-up: traced_messenger.c;
 * a capture spread to other processes: traced_spread.c.
 *
 * Must never: call back into the messenger, block (one short spin lock
 * per sampled span, to find leftovers at close), lock or allocate for an
 * unsampled span (server spans live in the transport's slot storage,
 * client spans come from a list of spares),
 * record anything for an unsampled span, or trust the incoming
 * SAMPLED/DEBUG flags beyond what the sampling policy allows
 * (ht_span_start_remote decides).
 */
#include <stdlib.h>
#include <string.h>

#include "hoptrace/error.h"
#include "hoptrace/span.h"
#include "common/clock.h"
#include "common/counters.h"
#include "common/spin.h"
#include "propagate/span_path.h"
#include "propagate/events.h"
#include "messenger/traced_capture.h"
#include "messenger/traced_internal.h"
#include "messenger/traced_state.h"
#include "messenger/traced_names.h"
#include "transport/hooks.h"
#include "common/tls_hot.h"

/* The context the thread had before the handler running on it. */
static HT_TLS_HOT struct {
  ht_trace_context ctx;
  bool has, writes;
} tl_saved;

/* --- live list */

/* Lock held. */
static void link_live(ts_state *st, ts_slot *s) {
  s->next = st->live.next;
  s->prev = &st->live;
  st->live.next->prev = s;
  st->live.next = s;
}

/* The slot's fields but its span (in place already, or the caller's to
 * copy in); kind, start_ns, desc and peer are the caller's to set (its
 * names' lookup sets both). */
static void slot_fill(ts_slot *s, ts_state *st, bool owned) {
  s->st = st;
  s->owned = owned;
  s->sent = false;
  s->oneway = false;
  atomic_store_explicit(&s->capture, false, memory_order_relaxed);
  s->kv.count = 0;
  s->name = NULL;
  s->kv.key[0] = '\0';
}

/* A server slot in the transport's storage whose span, started in place,
 * records: filled and linked. (An unsampled one is read for its span
 * only: nothing to fill, and nothing at close to find it for.) */
static void slot_init(ts_slot *s, ts_state *st) {
  slot_fill(s, st, false);
  ht_spin_lock(&st->lock);
  link_live(st, s);
  ht_spin_unlock(&st->lock);
}

/* A client span, started quiet on the caller's stack, into its slot: the
 * fields a quiet start sets (span_path.h ht_span_set_: ids and flags,
 * state, status, start, probability), which are all a span that is not
 * the span API's is read for; 64 of its 152 bytes (the whole span's copy
 * cost 20 instructions a call). */
static void span_move(ht_span *to, const ht_span *from) {
  to->ctx = from->ctx;
  to->state_ = from->state_;
  to->status_ = from->status_;
  to->start_ = from->start_;
  to->prob_ = from->prob_;
}

/* A client slot for a sampled span, linked: a spare, taken in the same
 * critical section that links it, else a new one. NULL: no memory. */
static ts_slot *slot_new(ts_state *st, const ht_span *span) {
  ht_spin_lock(&st->lock);
  ts_slot *s = st->spares;
  if (s != NULL) {
    st->spares = s->next;
    st->n_spares--;
    span_move(&s->span, span);
    slot_fill(s, st, true);
    link_live(st, s);
  }
  ht_spin_unlock(&st->lock);
  if (s != NULL || (s = malloc(sizeof(*s))) == NULL)
    return s;
  span_move(&s->span, span);
  slot_fill(s, st, true);
  ht_spin_lock(&st->lock);
  link_live(st, s);
  ht_spin_unlock(&st->lock);
  return s;
}

/* The slot's last sight: unlinked (every slot is linked from its fill
 * to here), and kept as a spare or freed if it is ours. Inline in the
 * sampled hooks, which have their registers saved already (a call of its
 * own cost about 12 instructions a slot). */
static inline void slot_release(ts_slot *s) {
  if (__builtin_expect(s->name != NULL, 0)) { /* no recorder reference */
    free(s->name);
    s->name = NULL;
  }
  ts_state *st = s->st;
  bool keep = !s->owned; /* the transport's storage: not ours to free */
  ht_spin_lock(&st->lock);
  s->prev->next = s->next;
  s->next->prev = s->prev;
  if (__builtin_expect(atomic_load_explicit(&s->capture, memory_order_relaxed), 0))
    atomic_fetch_sub_explicit(&ht_shim_reply_gate_, HT_SHIM_GATE_FLAGGED,
                              memory_order_relaxed); /* flag_open_servers' */
  if (!keep && st->n_spares < TS_SPARES_MAX) {
    s->next = st->spares;
    st->spares = s;
    st->n_spares++;
    keep = true;
  }
  ht_spin_unlock(&st->lock);
  if (!keep)
    free(s);
}

/* --- small helpers */

static const char *op_of(const ht_envelope *env) {
  return env->operation != NULL ? env->operation : "";
}

/* --- span sides (schema 3) */

/* A sampled span's name kept as a copy when it has no reference. */
static void slot_name_copy(ts_slot *s, const ht_span_info *info) {
  if (s->desc == NULL)
    s->name = strdup(info->name); /* NULL: recorded unnamed */
}

/* The slot's span, recorded in one event from start_ns to now. */
static void finish_side(ts_slot *s, uint8_t frames) {
  ht_span_info info = {s->name, s->kind, s->st->service, ""};
  ht_span_finish_side_kv(&s->span, s->desc, &info, s->start_ns, s->peer, frames,
                         s->kv.key[0] != '\0' ? s->kv.key : NULL, s->kv.value);
}

/* The flags a per-message hint gives a child of ctx. */
static uint32_t hinted_flags(uint32_t flags, ht_sample_hint hint) {
  switch (hint) {
  case HT_SAMPLE_YES:
    return (flags | HT_FLAG_SAMPLED) & ~HT_FLAG_DEBUG;
  case HT_SAMPLE_NO:
    return flags & ~(HT_FLAG_SAMPLED | HT_FLAG_DEBUG);
  case HT_SAMPLE_DEBUG:
    return flags | HT_FLAG_SAMPLED | HT_FLAG_DEBUG;
  default:
    return flags;
  }
}

/* Spans leave `endpoint` (the span's own address) empty: the messenger
 * knows its peer, not its own address, and the peer goes with the span's
 * event, which the tool turns into the remote endpoint.
 *
 * Client (or producer) span for an outgoing message on this thread,
 * recorded by the caller when it ends. */
static void start_client(ht_span *span, ht_sample_hint hint) {
  ht_trace_context cur;
  if (ht_current_get(&cur)) {
    cur.flags = hinted_flags(cur.flags, hint);
    if (ht_span_start_local_quiet(span, &cur) == 0)
      return;
  }
  ht_span_start_root_quiet(span, hint);
}

/* A root for a message that came without a context: out of line, so the
 * common path (a context) keeps only the remote start inline. */
__attribute__((noinline)) static void start_untraced_root(ht_span *span) {
  ht_span_start_root_quiet(span, HT_SAMPLE_DEFAULT);
}

/* --- client side */

/* A sampled client or producer span starts (span: the caller's, on its
 * stack), kept in a slot: a request's until its outcome (on_reply), a
 * one-way's until its frame goes out (on_message) or the send fails
 * (on_reply). The key-values the thread kept for this call
 * (hint_word & HT_HINT_KVS) are recorded on it. Inline, as
 * dispatch_sampled: the hook saves its registers for the span's start
 * anyway, and out of line the sampled path saved them twice
 * (bench/recording: traced messenger + kv recorded 8,119 -> 8,071
 * absolute for both; an unsampled message's path, the no-session row,
 * unchanged). */
static inline void encode_sampled(ts_state *st, ht_envelope *env,
                                  const ht_hook_peer *to, void **slot,
                                  ht_span *span, unsigned hint_word) {
  bool oneway = env->type == HT_MSG_ONEWAY;
  ht_span_info info = {op_of(env), oneway ? HT_SPAN_PRODUCER : HT_SPAN_CLIENT,
                       st->service, ""};
  if (hint_word & HT_HINT_KVS)
    ht_shim_next_call_record(span);
  ts_slot *s = slot_new(st, span);
  if (s == NULL) { /* no slot: counted now, frame or not */
    ht_span_set_error(span, HT_ENOMEM, "no memory for the client span");
    ht_span_finish_side(span, NULL, &info, ht_clock_now(), NULL, 0);
    ht_counter_add(HT_CTR_MSGS_SENT_SAMPLED, 1);
    return;
  }
  /* No clock read here: on_message(SEND) follows right after the frame
   * is encoded and reads "cs"; a call refused or failed before its frame
   * went out starts (and ends) when that is known. */
  s->start_ns = 0;
  s->oneway = oneway;
  s->kind = info.kind;
  /* both names now, while the peer's URL is valid (the send call) */
  ht_shim_client_refs(&s->span, st->serial, &info, to, &s->desc, &s->peer);
  slot_name_copy(s, &info);
  /* a call of a trace captured here: its server captures its part too
   * (the notices went to the peers called before) */
  if ((span->ctx.flags & HT_FLAG_RECORDED) && st->crumbs != NULL &&
      ht_shim_crumbs_note(st->crumbs, &span->ctx, to))
    env->trace.flags |= HT_FLAG_CAPTURE;
  *slot = s;
}

static void h_before_encode(void *arg, ht_envelope *env, const ht_hook_peer *to,
                            void **slot) {
  ht_span span;
  unsigned hint_word = ht_current_take_hint();
  start_client(&span, HT_HINT_SAMPLE(hint_word));
  env->has_trace = true;
  env->trace = span.ctx;
  /* unsampled: records nothing (finishing it would only mark it ended),
   * and the key-values kept for it are forgotten (traced_kv.c) */
  if (ht_span_writes_(&span))
    encode_sampled(arg, env, to, slot, &span, hint_word);
}

/* The end of a sampled client span (the slot before_encode made). Out of
 * line: the unsampled path, a failed call's, then saves no registers for
 * it. */
__attribute__((noinline)) static void reply_sampled(ts_slot *s, int status,
                                                    const ht_envelope *reply) {
  ht_span *span = &s->span;
  if (status == HT_EPEERERROR && reply != NULL) {
    ht_span_kv_int(span, "error.status", reply->status);
    ht_span_set_error(span, reply->status, ht_strerror(reply->status));
  } else if (status != 0) {
    ht_span_kv_str(span, "error", ht_err_name(status));
    ht_span_set_error(span, status, ht_strerror(status));
  }
  if (status != 0)
    ht_counter_add(HT_CTR_REQUESTS_FAILED, 1);
  if (reply != NULL) /* "cr": the span's end */
    ht_counter_add(HT_CTR_MSGS_RECEIVED_SAMPLED, 1);
  if (!s->sent) /* refused or failed before its frame went out: at once */
    s->start_ns = ht_clock_now();
  finish_side(s, (s->sent ? HT_SIDE_START_FRAME : 0) |
                     (reply != NULL ? HT_SIDE_END_FRAME : 0));
  if (ht_shim_capture_check(&span->ctx, true, s->start_ns,
                            status == HT_EPEERERROR && reply != NULL ? reply->status
                                                                      : status,
                            s->st->service, s->desc))
    ht_shim_captured_here(s->st, &span->ctx);
  else if (reply != NULL && reply->has_trace && (reply->trace.flags & HT_FLAG_CAPTURE))
    ht_shim_captured_there(s->st, &span->ctx, 1, false);
  slot_release(s);
}

/* A request with a client span, or one that failed (the transport counted
 * the reply's frame). */
static void h_on_reply(void *arg, int status, const ht_envelope *reply,
                       size_t reply_len, void *slot) {
  (void)arg;
  (void)reply_len;
  if (slot != NULL)
    reply_sampled(slot, status, reply);
  else if (status != 0)
    ht_counter_add(HT_CTR_REQUESTS_FAILED, 1);
}

/* --- server side: dispatch */

/* A sampled server or consumer span starts at "sr" (span: in s, or on
 * the caller's stack when the transport gave no storage). Inline: see
 * encode_sampled. */
static inline void dispatch_sampled(ts_state *st, ts_slot *s, ht_span *span,
                                    const ht_envelope *env,
                                    const ht_hook_origin *from) {
  ht_span_info info = {op_of(env), env->type == HT_MSG_ONEWAY
                                       ? HT_SPAN_CONSUMER
                                       : HT_SPAN_SERVER,
                       st->service, ""};
  uint64_t now = ht_clock_now(); /* "sr" */
  ht_counter_add(HT_CTR_MSGS_RECEIVED_SAMPLED, 1);
  if (s == NULL) {
    ht_span_set_error(span, HT_ENOMEM, "no storage for the server span");
    ht_span_finish_side(span, NULL, &info, now, ht_shim_conn_peer_ref(span, from),
                        HT_SIDE_START_FRAME);
    return; /* the handler still runs in its context */
  }
  slot_init(s, st);
  s->start_ns = now;
  s->kind = info.kind;
  ht_shim_server_refs(span, st->serial, &info, from, &s->desc, &s->peer);
  slot_name_copy(s, &info);
  if ((span->ctx.flags & HT_FLAG_RECORDED) && st->crumbs != NULL) {
    ht_shim_crumbs_note(st->crumbs, &span->ctx, NULL);
    /* the caller had captured the trace before this call */
    if (env->has_trace && (env->trace.flags & HT_FLAG_CAPTURE))
      ht_shim_captured_there(st, &span->ctx, 1, false);
  }
}

static void h_before_dispatch(void *arg, const ht_envelope *env,
                              const ht_hook_origin *from, size_t frame_len,
                              void **dispatch_slot,
                              const ht_trace_context **reply_trace) {
  (void)frame_len; /* counted by the transport */
  ts_slot *s = *dispatch_slot; /* the transport's storage */
  ht_span spare, *span = s != NULL ? &s->span : &spare; /* no copy */
  if (!env->has_trace || ht_span_start_remote_quiet(span, &env->trace) != 0)
    start_untraced_root(span);
  bool writes = ht_span_writes_(span); /* once: the stores below may alias */
  tl_saved.has = ht_current_get(&tl_saved.ctx);
  tl_saved.writes = ht_current_.writes;
  ht_current_set_span(&span->ctx, writes);
  if (s != NULL)
    *reply_trace = &s->span.ctx; /* the storage lives as long as the request */
  if (writes)
    dispatch_sampled(arg, s, span, env, from);
  else /* holds nothing, records nothing: no request_done (hooks.h) */
    *dispatch_slot = NULL;
}

/* A sampled one-way's consumer span ends with its handler. */
__attribute__((noinline)) static void oneway_sampled(ts_slot *s) {
  finish_side(s, HT_SIDE_START_FRAME);
  slot_release(s);
}

static void h_after_dispatch(void *arg, const ht_envelope *env,
                             void *oneway_slot) {
  (void)arg;
  (void)env;
  ht_current_set_span(tl_saved.has ? &tl_saved.ctx : NULL, tl_saved.writes);
  if (oneway_slot != NULL) /* sampled: before_dispatch left no other */
    oneway_sampled(oneway_slot);
}

/* A sampled server span's request ends (before_dispatch left no slot for
 * an unsampled one; the transport counted the reply's frame): its reply
 * (frame_len > 0) went out, or none will. */
static void h_request_done(void *arg, void *dispatch_slot, int status,
                           size_t frame_len) {
  (void)arg;
  ts_slot *s = dispatch_slot;
  if (frame_len > 0)
    ht_counter_add(HT_CTR_MSGS_SENT_SAMPLED, 1);
  if (status == 1) {
    ht_span_annotate(&s->span, "dropped");
    ht_span_set_error(&s->span, HT_ETIMEDOUT, "request dropped unanswered");
  } else if (status != 0) {
    ht_span_set_error(&s->span, status, ht_strerror(status));
  }
  /* "ss": the reply was just encoded on this thread */
  finish_side(s, HT_SIDE_START_FRAME | (frame_len > 0 ? HT_SIDE_END_FRAME : 0));
  /* answered: checked before its reply was encoded (h_before_reply) */
  if (frame_len == 0 &&
      ht_shim_capture_check(&s->span.ctx, false, s->start_ns,
                            status == 1 ? HT_ETIMEDOUT : status, s->st->service, s->desc))
    ht_shim_captured_here(s->st, &s->span.ctx);
  slot_release(s);
}

/* A recorded server span is about to be answered: a trigger fires now,
 * and the reply carries HT_FLAG_CAPTURE to the caller when this process
 * captured the trace (now, or while the request was open). Called only
 * while a trigger is set or a reply is to be flagged (before_reply_gate:
 * ht_shim_reply_gate_). */
static void h_before_reply(void *arg, void *dispatch_slot, int32_t status) {
  ts_slot *s = dispatch_slot; /* sampled: the only ones with a slot */
  if (ht_shim_capture_check(&s->span.ctx, false, s->start_ns, status, s->st->service,
                            s->desc))
    ht_shim_captured_here(arg, &s->span.ctx);
  /* the one thread that writes the context the transport copies */
  if (atomic_load_explicit(&s->capture, memory_order_relaxed))
    s->span.ctx.flags |= HT_FLAG_CAPTURE;
}

/* --- message events and counters */

/* A sampled request or one-way went out: the messages before_encode left
 * a slot for (the transport counted the frame; RECV frames too). */
static void h_on_message(void *arg, ht_hook_dir dir, const ht_envelope *env,
                         size_t frame_len, const char *peer, void *slot) {
  (void)arg;
  (void)env;
  (void)frame_len;
  (void)peer; /* named at before_encode */
  if (dir != HT_HOOK_SEND)
    return;
  ht_counter_add(HT_CTR_MSGS_SENT_SAMPLED, 1);
  ts_slot *s = slot;
  if (s->sent)
    return; /* "cs" already set */
  s->sent = true; /* "cs": the client span starts now */
  s->start_ns = ht_clock_now();
  if (s->oneway) { /* its span ends as its frame goes out */
    finish_side(s, HT_SIDE_START_FRAME);
    slot_release(s);
  }
}

/* --- lifecycle: the words kept with a connection and a handler */

static void *h_conn_init(void *arg) {
  (void)arg;
  return calloc(1, sizeof(ts_words)); /* NULL: looked up every time */
}

/* The default handler keeps none: it serves many operations. */
static void *h_handler_init(void *arg, const char *op) {
  (void)arg;
  return op != NULL ? calloc(1, sizeof(ts_words)) : NULL;
}

static void h_words_fini(void *arg, void *words) {
  (void)arg;
  free(words);
}

/* --- close, and the table */

/* Spans still open at close (requests never answered before the
 * messenger went away): recorded as such, then freed; then the state. */
static void h_destroy(void *arg) {
  ts_state *st = arg;
  while (st->live.next != &st->live) {
    ts_slot *s = st->live.next;
    ht_span_set_error(&s->span, HT_ESHUTDOWN, "messenger closed");
    if (s->owned && !s->sent)
      s->start_ns = ht_clock_now();
    finish_side(s, s->owned && !s->sent ? 0 : HT_SIDE_START_FRAME);
    slot_release(s);
  }
  while (st->spares != NULL) {
    ts_slot *s = st->spares;
    st->spares = s->next;
    free(s);
  }
  ht_shim_traced_state_free(st);
}

const ht_transport_hooks ht_shim_traced_hooks = {
    .before_encode = h_before_encode,
    .before_dispatch = h_before_dispatch,
    .after_dispatch = h_after_dispatch,
    .request_done = h_request_done,
    .on_reply = h_on_reply,
    .on_message = h_on_message,
    .before_reply = h_before_reply,
    .before_reply_gate = &ht_shim_reply_gate_,
    .on_notice = ht_shim_on_notice, /* traced_spread.c */
    .conn_init = h_conn_init,
    .conn_fini = h_words_fini,
    .handler_init = h_handler_init,
    .handler_fini = h_words_fini,
    .destroy = h_destroy,
    .dispatch_slot_size = sizeof(ts_slot),
    .count_frames = true,
};
_Static_assert(sizeof(ts_slot) <= HT_HOOK_SLOT_MAX, "a server slot fits the transport's storage");
