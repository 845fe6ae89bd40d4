/* When each hook fires (hooks.h says what each one is told): the rules in
 * one place, one helper a hook, so each call site is one line. A plain
 * messenger's hook table is all zero (calloc), so every helper costs it
 * the one `has_hooks` branch its site had before, or one test of a zero
 * field; a traced one pays the field tests it paid before. Internal to
 * src/transport/, like internal.h.
 */
#ifndef HT_TRANSPORT_FIRE_H
#define HT_TRANSPORT_FIRE_H

#include "transport/internal.h"

/* Frames counted for a hook table that asks (count_frames): false in a
 * plain messenger's zeroed table. */
static inline void ht_fire_count_sent(ht_messenger *m, size_t frame_len) {
  if (m->hooks.count_frames)
    ht_counter_add2(HT_CTR_MSGS_SENT, 1, HT_CTR_BYTES_SENT, frame_len);
}

static inline void ht_fire_count_received(ht_messenger *m, size_t frame_len) {
  if (m->hooks.count_frames)
    ht_counter_add2(HT_CTR_MSGS_RECEIVED, 1, HT_CTR_BYTES_RECEIVED, frame_len);
}

/* Bytes a request keeps for its dispatch slot (0 for a plain messenger). */
static inline size_t ht_fire_slot_size(const ht_messenger *m) {
  return m->has_hooks ? m->hooks.dispatch_slot_size : 0;
}

/* Sending thread, every request or one-way the application sends. */
static inline void ht_fire_before_encode(ht_messenger *m, ht_envelope *env,
                                         const ht_peer *p, void **slot) {
  if (m->has_hooks && m->hooks.before_encode != NULL) {
    ht_hook_peer to = {p->url, p->serial};
    m->hooks.before_encode(m->hooks_arg, env, &to, slot);
  }
}

/* The frame was encoded and accepted: counted, on_message(SEND) when
 * before_encode left a slot; a one-way's slot ends there (*slot NULL, so a
 * later failure passes it to no on_reply). */
static inline void ht_fire_sent(ht_messenger *m, const ht_envelope *env,
                                size_t frame_len, const char *peer,
                                void **slot) {
  if (!m->has_hooks)
    return;
  ht_fire_count_sent(m, frame_len);
  if (*slot != NULL && m->hooks.on_message != NULL)
    m->hooks.on_message(m->hooks_arg, HT_HOOK_SEND, env, frame_len, peer,
                        *slot);
  if (env->type == HT_MSG_ONEWAY)
    *slot = NULL;
}

/* A send call failed (rc != 0) after before_encode: on_reply for a request,
 * or a one-way still holding a slot; never for HT_ESHUTDOWN (the table may
 * be destroyed already). */
static inline void ht_fire_send_failed(ht_messenger *m, int rc,
                                       ht_msg_type type, void *slot) {
  if (rc != 0 && (type == HT_MSG_REQUEST || slot != NULL) && m->has_hooks &&
      m->hooks.on_reply != NULL && rc != HT_ESHUTDOWN)
    m->hooks.on_reply(m->hooks_arg, rc, NULL, 0, slot);
}

/* A request settles: its reply (if any) counted, on_reply when it has a
 * slot or failed. */
static inline void ht_fire_settled(ht_messenger *m, int status,
                                   const ht_envelope *reply, size_t reply_len,
                                   void *slot) {
  if (!m->has_hooks)
    return;
  if (reply != NULL)
    ht_fire_count_received(m, reply_len);
  if ((slot != NULL || status != 0) && m->hooks.on_reply != NULL)
    m->hooks.on_reply(m->hooks_arg, status, reply, reply_len, slot);
}

/* A request or one-way received, before its handler: counted, *slot
 * pointed at the slot storage (the request's, else `local`, the frame's)
 * when the table asks for some, and before_dispatch told its origin. */
static inline void ht_fire_before_dispatch(ht_messenger *m, ht_tr_conn *c,
                                           const ht_tr_handler *h,
                                           const ht_envelope *env,
                                           size_t frame_len, ht_request *req,
                                           void *local, void **slot,
                                           const ht_trace_context **trace) {
  if (!m->has_hooks)
    return;
  ht_fire_count_received(m, frame_len); /* a matched reply: in settle */
  if (m->hooks.dispatch_slot_size > 0)
    *slot = req != NULL ? ht_tr_request_storage(req) : local;
  if (m->hooks.before_dispatch != NULL) {
    c->origin.handler = h != NULL ? h->hook_state : NULL;
    m->hooks.before_dispatch(m->hooks_arg, env, &c->origin, frame_len, slot,
                             trace);
  }
}

/* The handler returned: a one-way's slot is seen for the last time. */
static inline void ht_fire_after_dispatch(ht_messenger *m,
                                          const ht_envelope *env,
                                          void *oneway_slot) {
  if (m->has_hooks && m->hooks.after_dispatch != NULL)
    m->hooks.after_dispatch(m->hooks_arg, env, oneway_slot);
}

/* A request's reply or error is about to be encoded (it has a slot), and
 * the hook's gate, if it has one, is open. */
static inline void ht_fire_before_reply(ht_messenger *m, void *slot,
                                        int32_t status) {
  if (slot != NULL && m->hooks.before_reply != NULL &&
      (m->hooks.before_reply_gate == NULL ||
       atomic_load_explicit(m->hooks.before_reply_gate, memory_order_relaxed)))
    m->hooks.before_reply(m->hooks_arg, slot, status);
}

/* A received request ends: its reply (frame_len > 0) counted,
 * request_done when it has a dispatch slot. */
static inline void ht_fire_request_done(ht_messenger *m, void *slot,
                                        int status, size_t frame_len) {
  if (!m->has_hooks)
    return;
  if (frame_len > 0)
    ht_fire_count_sent(m, frame_len);
  if (slot != NULL && m->hooks.request_done != NULL)
    m->hooks.request_done(m->hooks_arg, slot, status, frame_len);
}

/* A notice arrived: counted, on_notice; no handler sees it. */
static inline void ht_fire_notice(ht_messenger *m, ht_tr_conn *c,
                                  const ht_envelope *env, size_t frame_len) {
  if (!m->has_hooks)
    return;
  ht_fire_count_received(m, frame_len);
  if (m->hooks.on_notice != NULL) {
    c->origin.handler = NULL; /* no handler: not the last dispatch's */
    m->hooks.on_notice(m->hooks_arg, env, &c->origin);
  }
}

/* A frame no other hook sees (an unmatched reply, an unknown type):
 * counted, on_message(RECV). */
static inline void ht_fire_unseen(ht_messenger *m, ht_tr_conn *c,
                                  const ht_envelope *env, size_t frame_len) {
  if (!m->has_hooks)
    return;
  ht_fire_count_received(m, frame_len);
  if (m->hooks.on_message != NULL)
    m->hooks.on_message(m->hooks_arg, HT_HOOK_RECV, env, frame_len, c->name,
                        NULL);
}

/* Lifecycle (hooks.h): a NULL state has no fini. */
static inline void *ht_fire_conn_init(ht_messenger *m) {
  return m->hooks.conn_init != NULL ? m->hooks.conn_init(m->hooks_arg) : NULL;
}

static inline void ht_fire_conn_fini(ht_messenger *m, void *state) {
  if (state != NULL && m->hooks.conn_fini != NULL)
    m->hooks.conn_fini(m->hooks_arg, state);
}

static inline void *ht_fire_handler_init(ht_messenger *m, const char *op) {
  return m->hooks.handler_init != NULL
             ? m->hooks.handler_init(m->hooks_arg, op)
             : NULL;
}

static inline void ht_fire_handler_fini(ht_messenger *m, void *state) {
  if (state != NULL && m->hooks.handler_fini != NULL)
    m->hooks.handler_fini(m->hooks_arg, state);
}

/* The messenger is freed (closed, or its construction failed). */
static inline void ht_fire_destroy(ht_messenger *m) {
  if (m->has_hooks && m->hooks.destroy != NULL)
    m->hooks.destroy(m->hooks_arg);
}

#endif /* HT_TRANSPORT_FIRE_H */
