/* Incoming envelopes: replies go to their pending request, requests and
 * one-ways to their handler (or the default, or an HT_ENOHANDLER error).
 * Must never keep a pointer into the envelope past the call: it points
 * into the connection's read buffer or the frame reader's scratch. */
#include "hoptrace/error.h"
#include "transport/fire.h"

/* false: the reply matched no pending request (no hook saw it). */
static bool deliver_reply(ht_tr_conn *c, const ht_envelope *env,
                          size_t frame_len) {
  ht_tr_out *o = ht_tr_pending_take(c, env->sequence);
  if (o == NULL) {
    ht_tr_log(c->m, HT_LOG_DEBUG, "%s: reply %llu matches no pending request",
           c->name, (unsigned long long)env->sequence);
    return false;
  }
  o->pend_conn = NULL;
  bool error = env->type == HT_MSG_ERROR || env->status != 0;
  ht_tr_out_settle(o, error ? HT_EPEERERROR : 0, env, frame_len);
  return true;
}

static void deliver_request(ht_tr_conn *c, const ht_envelope *env,
                            size_t frame_len) {
  ht_messenger *m = c->m;
  bool is_request = env->type == HT_MSG_REQUEST;
  ht_tr_handler *h = ht_tr_find_handler(m, env->operation);
  ht_request *req = NULL;
  int rc = is_request ? ht_tr_request_new(c, env, &req) : 0;
  /* The hooks' slot storage: the request's, else (one-way, or no memory
   * for the request) this frame's, which outlives the slot's last hook. */
  _Alignas(max_align_t) unsigned char local[HT_HOOK_SLOT_MAX];
  void *slot = NULL;
  const ht_trace_context *reply_trace = NULL;
  ht_fire_before_dispatch(m, c, h, env, frame_len, req, local, &slot,
                          &reply_trace);
  if (is_request) {
    if (rc != 0) {
      ht_tr_log(m, HT_LOG_WARN, "%s: dropping request: %s", c->name,
             ht_strerror(rc));
      ht_fire_request_done(m, slot, rc, 0);
      return;
    }
    req->slot = slot;
    req->reply_trace = reply_trace;
  }
  if (is_request && m->state != TR_RUNNING) {
    ht_request_reply(req, HT_ESHUTDOWN, NULL);
  } else if (h == NULL) {
    if (is_request)
      ht_request_reply(req, HT_ENOHANDLER, NULL);
    else
      ht_tr_log(m, HT_LOG_DEBUG, "%s: no handler for one-way '%s'", c->name,
             env->operation != NULL ? env->operation : "");
  } else {
    h->fn(h->arg, req, env);
  }
  ht_fire_after_dispatch(m, env, is_request ? NULL : slot);
}

void ht_tr_dispatch(ht_tr_conn *c, const ht_envelope *env, size_t frame_len) {
  ht_messenger *m = c->m;
  if (c->peer != NULL)
    c->peer->backoff_ms = 0; /* the peer works: reconnect fast next time */
  switch (env->type) {
  case HT_MSG_REPLY:
  case HT_MSG_ERROR:
    if (deliver_reply(c, env, frame_len))
      return;
    break;
  case HT_MSG_ONEWAY:
    if (ht_tr_is_notice(env)) { /* the transport's own: no handler sees it */
      ht_fire_notice(m, c, env, frame_len);
      return;
    }
    deliver_request(c, env, frame_len);
    return;
  case HT_MSG_REQUEST:
    deliver_request(c, env, frame_len);
    return;
  default:
    ht_tr_log(m, HT_LOG_DEBUG, "%s: ignoring %s message", c->name,
           ht_msg_type_name(env->type));
    break;
  }
  /* no other hook saw it: the traced layer still counts it */
  ht_fire_unseen(m, c, env, frame_len);
}
