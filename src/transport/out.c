/* Outgoing frames (ht_tr_out): encode the header next to the caller's payload
 * (copied only when the caller gave no `done`), and end each frame's life
 * exactly once per side: written (payload done) and, for requests, settled
 * (reply callback). Must never call a user callback twice or free a frame
 * that a write, a pending table or the timeout heap still holds. */
#include <stdlib.h>
#include <string.h>

#include "hoptrace/error.h"
#include "transport/fire.h"

int ht_tr_out_new(const ht_envelope *env, const ht_payload *payload,
               ht_tr_out **out) {
  /* Sized by the bound, not the exact size: the encoder then writes in
   * one pass (a few dozen spare bytes per frame). */
  size_t oplen = env->operation != NULL ? strlen(env->operation) : 0;
  if (oplen > HT_FRAME_HARD_MAX)
    return HT_EINVAL;
  size_t hsize = HT_FRAME_HEADER_MAX(oplen);
  bool copy = payload != NULL && payload->len > 0 && payload->done == NULL;
  /* One block: the frame, the header, and the payload copy if any. */
  ht_tr_out *o = malloc(sizeof(*o) + hsize + (copy ? payload->len : 0));
  if (o == NULL)
    return HT_ENOMEM;
  memset(o, 0, sizeof(*o));
  o->cmd.kind = TR_CMD_OUT;
  o->heap_index = TR_NO_HEAP;
  int rc = ht_frame_encode_header(env, o->header, hsize, &o->header_len);
  if (rc != 0) {
    free(o);
    return rc == HT_EFRAMETOOBIG && env->payload_len > HT_FRAME_HARD_MAX
               ? HT_EFRAMETOOBIG
               : HT_EINVAL; /* as before: bad envelope */
  }
  if (payload != NULL)
    o->payload = *payload; /* an empty payload may still have a done */
  if (copy) {
    o->copy = o->header + hsize;
    memcpy(o->copy, payload->data, payload->len);
  }
  o->frame_len = o->header_len + o->payload.len;
  *out = o;
  return 0;
}

static void drop_refs(ht_tr_out *o) {
  if (o->peer != NULL)
    ht_tr_peer_unref(o->peer);
  if (o->reply_conn != NULL)
    ht_tr_conn_unref(o->reply_conn);
  free(o); /* the copy lives in the same block */
}

void ht_tr_out_discard(ht_tr_out *o) {
  if (o->peer != NULL)
    ht_tr_peer_release_budget(o->peer, o->frame_len);
  drop_refs(o);
}

void ht_tr_out_maybe_free(ht_tr_out *o) {
  if (!o->written)
    return;
  if (o->kind == TR_OUT_REQUEST && !o->settled)
    return;
  drop_refs(o);
}

/* The frame left the queue: on the wire (status 0) or dropped. */
void ht_tr_out_written(ht_tr_out *o, int status) {
  o->written = true;
  if (o->peer != NULL)
    ht_tr_peer_release_budget(o->peer, o->frame_len);
  if (o->payload.done != NULL) {
    ht_done_fn done = o->payload.done;
    o->payload.done = NULL;
    done(o->payload.done_arg, status);
  }
}

void ht_tr_out_settle(ht_tr_out *o, int status, const ht_envelope *reply,
                      size_t reply_len) {
  if (o->settled)
    return;
  o->settled = true;
  ht_messenger *m = o->peer->m;
  if (o->pend_conn != NULL) {
    ht_tr_pending_take(o->pend_conn, o->seq);
    o->pend_conn = NULL;
  }
  ht_tr_timeouts_remove(m, o);
  ht_fire_settled(m, status, reply, reply_len, o->slot);
  o->fn(o->fn_arg, status, reply);
  ht_tr_out_maybe_free(o);
}

/* A frame that was accepted and cannot be delivered: every callback it
 * owes runs now with `status`. */
void ht_tr_out_fail(ht_tr_out *o, int status) {
  bool is_request = o->kind == TR_OUT_REQUEST;
  if (!o->written) {
    o->written = true; /* keep settle from freeing it under us */
    if (o->peer != NULL)
      ht_tr_peer_release_budget(o->peer, o->frame_len);
    if (o->payload.done != NULL) {
      ht_done_fn done = o->payload.done;
      o->payload.done = NULL;
      done(o->payload.done_arg, status);
    }
  }
  if (is_request && !o->settled) {
    ht_tr_out_settle(o, status, NULL, 0); /* frees */
    return;
  }
  ht_tr_out_maybe_free(o);
}
