/* ht_request tokens: the right (and duty) to answer one incoming request,
 * usable from any thread; and ht_message_copy to keep a received message.
 * A token must never outlive its references: it holds the messenger core
 * and the connection struct, so answering after the connection or even
 * the messenger closed is safe and just reports the error. */
#include <stdlib.h>
#include <string.h>

#include "hoptrace/error.h"
#include "transport/fire.h"

int ht_tr_request_new(ht_tr_conn *c, const ht_envelope *env, ht_request **out) {
  const char *op = env->operation != NULL ? env->operation : "";
  size_t n = strlen(op);
  size_t align = _Alignof(max_align_t);
  size_t slot = ht_fire_slot_size(c->m);
  slot = (slot + align - 1) / align * align;
  ht_request *r = malloc(sizeof(*r) + slot + n + 1);
  if (r == NULL)
    return HT_ENOMEM;
  r->op = (const char *)r->tail + slot;
  r->m = c->m;
  atomic_fetch_add(&c->m->refs, 1);
  r->conn = c;
  ht_tr_conn_ref(c);
  r->seq = env->sequence;
  r->slot = NULL;
  r->reply_trace = NULL;
  memcpy(r->tail + slot, op, n + 1);
  c->inflight++;
  atomic_fetch_add(&c->m->tokens_open, 1);
  ht_tr_conn_update_reading(c);
  *out = r;
  return 0;
}

const char *ht_request_operation(const ht_request *req) {
  return req != NULL ? req->op : NULL;
}

void *ht_transport_request_slot(const ht_request *req) {
  return req != NULL ? req->slot : NULL;
}

const ht_trace_context *ht_transport_request_trace(const ht_request *req) {
  return req != NULL ? req->reply_trace : NULL;
}

const char *ht_request_peer(const ht_request *req) {
  return req != NULL ? req->conn->name : NULL;
}

/* handed: a reply or drop notice reached the loop side, which counts the
 * token as finished (so a drain never closes under a queued reply). */
static void free_token(ht_request *req, bool handed) {
  ht_messenger *m = req->m;
  if (!handed)
    atomic_fetch_sub(&m->tokens_open, 1);
  ht_tr_conn_unref(req->conn);
  free(req);
  ht_tr_unref(m);
}

/* Builds the reply frame; the token's connection reference moves to it. */
static int build_reply(ht_request *req, int32_t status,
                       const ht_payload *payload, ht_tr_out **out) {
  ht_envelope env = {.version = HT_WIRE_VERSION,
                     .type = status == 0 ? HT_MSG_REPLY : HT_MSG_ERROR,
                     .sequence = req->seq,
                     .status = status};
  if (payload != NULL) {
    env.payload = payload->data;
    env.payload_len = payload->len;
  }
  ht_fire_before_reply(req->m, req->slot, status);
  if (req->reply_trace != NULL) {
    env.has_trace = true;
    env.trace = *req->reply_trace;
  }
  if (atomic_load(&req->conn->state) == TR_CONN_CLOSING)
    return HT_ECONNRESET;
  int rc = ht_tr_out_new(&env, payload, out);
  if (rc != 0)
    return rc;
  (*out)->kind = (ht_tr_out_kind)env.type;
  (*out)->reply_conn = req->conn;
  ht_tr_conn_ref(req->conn);
  return 0;
}

/* Hands `o` (a reply or a drop notice) to the loop. The connection's
 * inflight count drops there, so a stopped reader restarts. */
static int hand_over(ht_messenger *m, bool on_loop, ht_tr_out *o) {
  if (on_loop) {
    int rc = ht_tr_submit_out(m, o);
    if (rc != 0)
      ht_tr_out_discard(o);
    return rc;
  }
  int rc = ht_tr_leave_push(m, &o->cmd);
  if (rc != 0)
    ht_tr_out_discard(o);
  return rc;
}

int ht_request_reply(ht_request *req, int32_t status,
                     const ht_payload *payload) {
  if (req == NULL)
    return HT_EINVAL;
  ht_messenger *m = req->m;
  bool on_loop = ht_tr_on_loop(m);
  if (!on_loop && ht_tr_enter(m) != 0) {
    free_token(req, false); /* closed: hooks are gone */
    return HT_ESHUTDOWN;
  }
  ht_tr_out *o = NULL;
  int rc = build_reply(req, status, payload, &o);
  if (rc != 0) {
    ht_fire_request_done(m, req->slot, rc, 0);
    if (!on_loop) {
      ht_tr_leave(m);
    } else {
      req->conn->inflight--;
      ht_tr_conn_update_reading(req->conn);
    }
    free_token(req, false);
    return rc;
  }
  ht_fire_request_done(m, req->slot, status, o->frame_len);
  rc = hand_over(m, on_loop, o);
  free_token(req, true);
  return rc;
}

void ht_request_drop(ht_request *req) {
  if (req == NULL)
    return;
  ht_messenger *m = req->m;
  bool on_loop = ht_tr_on_loop(m);
  if (!on_loop && ht_tr_enter(m) != 0) {
    free_token(req, false);
    return;
  }
  ht_fire_request_done(m, req->slot, 1, 0);
  ht_tr_out *o = calloc(1, sizeof(*o));
  if (o == NULL) {
    if (!on_loop)
      ht_tr_leave(m);
    free_token(req, false);
    return;
  }
  o->cmd.kind = TR_CMD_OUT;
  o->kind = TR_OUT_DROP;
  o->heap_index = TR_NO_HEAP;
  o->reply_conn = req->conn;
  ht_tr_conn_ref(req->conn);
  hand_over(m, on_loop, o);
  free_token(req, true);
}

int ht_message_copy(const ht_envelope *msg, ht_envelope **out) {
  if (msg == NULL || out == NULL || (msg->payload == NULL && msg->payload_len))
    return HT_EINVAL;
  const char *op = msg->operation != NULL ? msg->operation : "";
  size_t oplen = strlen(op) + 1;
  char *block = malloc(sizeof(ht_envelope) + oplen + msg->payload_len);
  if (block == NULL)
    return HT_ENOMEM;
  ht_envelope *copy = (ht_envelope *)block;
  *copy = *msg;
  char *opcopy = block + sizeof(ht_envelope);
  memcpy(opcopy, op, oplen);
  copy->operation = opcopy;
  if (msg->payload_len > 0) {
    memcpy(opcopy + oplen, msg->payload, msg->payload_len);
    copy->payload = opcopy + oplen;
  } else {
    copy->payload = NULL;
  }
  *out = copy;
  return 0;
}

void ht_message_free(ht_envelope *copy) { free(copy); }
