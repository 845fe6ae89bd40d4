/* Outgoing peers: connect, reconnect with exponential back-off, and the
 * send calls (requests and one-ways) with their write budget. Must never
 * let a send grow a queue past its bound (the budget is reserved on the
 * sending thread, before anything is queued), and never reconnect a peer
 * that is closing. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hoptrace/error.h"
#include "transport/fire.h"

void ht_tr_peer_unref(ht_peer *p) {
  if (atomic_fetch_sub(&p->refs, 1) == 1) {
    free(p->url);
    free(p);
  }
}

void ht_tr_peer_release_budget(ht_peer *p, size_t bytes) {
  atomic_fetch_sub(&p->q_bytes, bytes);
  atomic_fetch_sub(&p->q_msgs, 1);
}

static int reserve_budget(ht_peer *p, size_t bytes) {
  const ht_messenger_options *o = &p->m->opts;
  size_t nb = atomic_fetch_add(&p->q_bytes, bytes) + bytes;
  size_t nm = atomic_fetch_add(&p->q_msgs, 1) + 1;
  /* One message larger than the bound still goes when the queue is empty. */
  if ((nb > o->write_queue_bytes && nb != bytes) || nm > o->write_queue_msgs) {
    ht_tr_peer_release_budget(p, bytes);
    atomic_store(&p->want_writable, true);
    return HT_EQUEUEFULL;
  }
  return 0;
}

/* --- connecting */

static void start_connect(ht_peer *p);

static void on_timer(uv_timer_t *t) {
  ht_peer *p = t->data;
  if (p->conn == NULL) {
    start_connect(p); /* back-off over */
    return;
  }
  if (atomic_load(&p->conn->state) != TR_CONN_CONNECTING)
    return;
  ht_tr_log(p->m, HT_LOG_INFO, "%s: connect timed out", p->url);
  ht_tr_conn_close(p->conn, HT_ENOTCONN);
}

static void on_connect(uv_connect_t *req, int status) {
  ht_tr_conn *c = req->data;
  if (atomic_load(&c->state) != TR_CONN_CONNECTING)
    return; /* closed meanwhile (timeout, peer close, shutdown) */
  ht_peer *p = c->peer;
  if (status != 0) {
    ht_tr_log(p->m, HT_LOG_INFO, "%s: connect: %s", p->url, uv_strerror(status));
    ht_tr_conn_close(c, HT_ENOTCONN);
    return;
  }
  uv_timer_stop(&p->timer);
  /* The back-off resets on the first frame received (dispatch.c), not
   * here: a server that accepts and drops at once is still backed off. */
  if (!p->addr.is_unix)
    uv_tcp_nodelay(&c->u.tcp, 1);
  atomic_store(&p->connected, true);
  ht_tr_conn_start_reading(c); /* also writes what was queued meanwhile */
}

static void start_connect(ht_peer *p) {
  ht_messenger *m = p->m;
  ht_tr_conn *c = ht_tr_conn_new(m, p->addr.is_unix);
  if (c == NULL) {
    ht_tr_log(m, HT_LOG_ERROR, "%s: cannot create a connection", p->url);
    uv_timer_start(&p->timer, on_timer, m->opts.reconnect_max_ms, 0);
    return;
  }
  snprintf(c->name, sizeof(c->name), "%s", p->url);
  c->peer = p;
  atomic_fetch_add(&p->refs, 1);
  c->connect_req.data = c;
  p->conn = c;
  atomic_store(&p->usable, true);
  int rc = 0;
  if (p->addr.is_unix)
    uv_pipe_connect(&c->connect_req, &c->u.pipe, p->addr.path, on_connect);
  else
    rc = uv_tcp_connect(&c->connect_req, &c->u.tcp,
                        (const struct sockaddr *)&p->addr.ss, on_connect);
  if (rc != 0) {
    ht_tr_log(m, HT_LOG_INFO, "%s: connect: %s", p->url, uv_strerror(rc));
    ht_tr_conn_close(c, HT_ENOTCONN);
    return;
  }
  uv_timer_start(&p->timer, on_timer, m->opts.connect_timeout_ms, 0);
}

/* c (p's current connection) is closing: back off, then reconnect. */
void ht_tr_peer_conn_lost(ht_peer *p, ht_tr_conn *c) {
  if (p->conn != c)
    return;
  p->conn = NULL;
  atomic_store(&p->connected, false);
  atomic_store(&p->usable, false);
  if (atomic_load(&p->closing) || p->m->state == TR_CLOSING)
    return;
  const ht_messenger_options *o = &p->m->opts;
  p->backoff_ms = p->backoff_ms == 0 ? o->reconnect_min_ms : p->backoff_ms * 2;
  if (p->backoff_ms > o->reconnect_max_ms)
    p->backoff_ms = o->reconnect_max_ms;
  uv_timer_start(&p->timer, on_timer, p->backoff_ms, 0);
}

static void on_timer_closed(uv_handle_t *h) {
  ht_peer *p = h->data;
  ht_messenger *m = p->m;
  m->open_handles--;
  ht_tr_peer_unref(p);
  ht_tr_check_drained(m);
}

/* Closes p's connection and timer and drops the user's reference. */
void ht_tr_peer_close_on_loop(ht_peer *p, int reason) {
  if (atomic_exchange(&p->closing, true))
    return;
  ht_messenger *m = p->m;
  if (p->prev != NULL)
    p->prev->next = p->next;
  else
    m->peers = p->next;
  if (p->next != NULL)
    p->next->prev = p->prev;
  if (p->conn != NULL)
    ht_tr_conn_close(p->conn, reason);
  uv_close((uv_handle_t *)&p->timer, on_timer_closed);
  ht_tr_peer_unref(p);
}

static int connect_on_loop(ht_messenger *m, void *arg) {
  ht_peer *p = arg;
  if (m->state != TR_RUNNING)
    return HT_ESHUTDOWN;
  uv_timer_init(m->loop, &p->timer);
  p->timer.data = p;
  m->open_handles++;
  atomic_fetch_add(&p->refs, 1); /* the timer's */
  p->next = m->peers;
  if (m->peers != NULL)
    m->peers->prev = p;
  m->peers = p;
  start_connect(p);
  return 0;
}

int ht_messenger_connect(ht_messenger *m, const char *url, ht_peer **out) {
  if (m == NULL || url == NULL || out == NULL)
    return HT_EINVAL;
  ht_peer *p = calloc(1, sizeof(*p));
  if (p == NULL)
    return HT_ENOMEM;
  int rc = ht_tr_addr_parse(url, &p->addr);
  if (rc == 0 && (p->url = strdup(url)) == NULL)
    rc = HT_ENOMEM;
  if (rc != 0) {
    free(p);
    return rc;
  }
  p->m = m;
  static atomic_uint_fast64_t serials;
  p->serial = atomic_fetch_add_explicit(&serials, 1, memory_order_relaxed) + 1;
  atomic_init(&p->refs, 1);
  rc = ht_tr_run_on_loop(m, connect_on_loop, p);
  if (rc != 0) {
    ht_tr_peer_unref(p);
    return rc;
  }
  *out = p;
  return 0;
}

static int close_on_loop(ht_messenger *m, void *arg) {
  (void)m;
  ht_tr_peer_close_on_loop(arg, HT_ECLOSED);
  return 0;
}

int ht_peer_close(ht_peer *p) {
  if (p == NULL)
    return HT_EINVAL;
  return ht_tr_run_on_loop(p->m, close_on_loop, p);
}

const char *ht_peer_url(const ht_peer *p) { return p != NULL ? p->url : NULL; }

int ht_peer_connected(const ht_peer *p) {
  return p != NULL && atomic_load(&p->connected);
}

size_t ht_peer_queued_bytes(const ht_peer *p) {
  return p != NULL ? atomic_load(&p->q_bytes) : 0;
}

size_t ht_peer_queued_msgs(const ht_peer *p) {
  return p != NULL ? atomic_load(&p->q_msgs) : 0;
}

typedef struct writable_args {
  ht_peer *p;
  ht_writable_fn fn;
  void *arg;
} writable_args;

static int writable_on_loop(ht_messenger *m, void *arg) {
  (void)m;
  writable_args *a = arg;
  a->p->wfn = a->fn;
  a->p->warg = a->arg;
  return 0;
}

int ht_peer_on_writable(ht_peer *p, ht_writable_fn fn, void *arg) {
  if (p == NULL)
    return HT_EINVAL;
  writable_args a = {p, fn, arg};
  return ht_tr_run_on_loop(p->m, writable_on_loop, &a);
}

/* --- the loop side of every outgoing frame */

static int submit_to_peer(ht_messenger *m, ht_tr_out *o) {
  ht_peer *p = o->peer;
  if (m->state == TR_CLOSING)
    return HT_ESHUTDOWN;
  if (atomic_load(&p->closing))
    return HT_ECLOSED;
  ht_tr_conn *c = p->conn;
  if (c == NULL || atomic_load(&c->state) == TR_CONN_CLOSING)
    return HT_ENOTCONN;
  if (o->kind == TR_OUT_REQUEST) {
    int rc = ht_tr_pending_add(c, o);
    if (rc == 0 && (rc = ht_tr_timeouts_add(m, o)) != 0) {
      ht_tr_pending_take(c, o->seq);
      o->pend_conn = NULL;
    }
    if (rc != 0)
      return rc;
  }
  ht_tr_conn_enqueue(c, o);
  return 0;
}

int ht_tr_submit_out(ht_messenger *m, ht_tr_out *o) {
  if (o->kind == TR_OUT_REQUEST || o->kind == TR_OUT_ONEWAY)
    return submit_to_peer(m, o);
  ht_tr_conn *c = o->reply_conn;
  c->inflight--;
  atomic_fetch_sub(&m->tokens_open, 1);
  int rc = 0;
  if (o->kind != TR_OUT_DROP) {
    if (atomic_load(&c->state) != TR_CONN_OPEN)
      rc = HT_ECONNRESET;
    else
      ht_tr_conn_enqueue(c, o);
  }
  ht_tr_conn_update_reading(c);
  ht_tr_check_drained(m);
  if (o->kind == TR_OUT_DROP)
    ht_tr_out_discard(o); /* last: it may hold the last reference to c */
  return rc;
}

int ht_tr_peer_send_own(ht_peer *p, const ht_envelope *env) {
  ht_messenger *m = p->m;
  if (atomic_load(&p->closing) || !atomic_load(&p->usable))
    return HT_ENOTCONN;
  ht_tr_out *o = NULL;
  int rc = ht_tr_out_new(env, NULL, &o);
  if (rc != 0)
    return rc;
  if ((rc = reserve_budget(p, o->frame_len)) != 0) {
    ht_tr_out_discard(o);
    return rc;
  }
  o->kind = TR_OUT_ONEWAY;
  o->peer = p;
  atomic_fetch_add(&p->refs, 1);
  o->seq = env->sequence;
  ht_fire_count_sent(m, o->frame_len);
  if ((rc = ht_tr_submit_out(m, o)) != 0)
    ht_tr_out_discard(o);
  return rc;
}

/* --- send calls (any thread) */

/* Cheap refusals, before anything is encoded or copied (the hooks have
 * seen the call: a traced messenger records a refused call too). */
static int refuse_early(ht_peer *p, const ht_payload *payload) {
  if (atomic_load(&p->closing))
    return HT_ECLOSED;
  if (!atomic_load(&p->usable))
    return HT_ENOTCONN;
  if (payload != NULL && payload->data == NULL && payload->len > 0)
    return HT_EINVAL;
  if (payload != NULL && payload->len > p->m->opts.max_frame)
    return HT_EFRAMETOOBIG;
  return 0;
}

static int send_msg(ht_peer *p, ht_msg_type type, const char *operation,
                    const ht_payload *payload, uint32_t timeout_ms,
                    ht_reply_fn fn, void *arg) {
  ht_messenger *m = p->m;
  bool on_loop = ht_tr_on_loop(m);
  /* Another thread enters first: every exit then passes the messenger's
   * lock, which orders this call before the final close frees peers. */
  if (!on_loop && ht_tr_enter(m) != 0)
    return HT_ESHUTDOWN;
  if (!atomic_load(&m->accepting)) { /* closing: the hooks may be gone */
    if (!on_loop)
      ht_tr_leave(m);
    return HT_ESHUTDOWN;
  }
  ht_envelope env = {.version = HT_WIRE_VERSION,
                     .type = type,
                     .sequence = atomic_fetch_add(&m->next_seq, 1),
                     .operation = operation};
  if (payload != NULL) {
    env.payload = payload->data;
    env.payload_len = payload->len;
  }
  void *slot = NULL;
  ht_fire_before_encode(m, &env, p, &slot);
  ht_tr_out *o = NULL;
  int rc = refuse_early(p, payload);
  if (rc == 0)
    rc = ht_tr_out_new(&env, payload, &o);
  if (rc == 0 && o->frame_len > m->opts.max_frame + HT_FRAME_PREFIX_LEN) {
    ht_tr_out_discard(o);
    rc = HT_EFRAMETOOBIG;
  }
  if (rc == 0 && (rc = reserve_budget(p, o->frame_len)) != 0)
    ht_tr_out_discard(o);
  if (rc == 0) {
    o->kind = (ht_tr_out_kind)type;
    o->peer = p;
    atomic_fetch_add(&p->refs, 1);
    o->seq = env.sequence;
    o->timeout_ms = timeout_ms != 0 ? timeout_ms : m->opts.request_timeout_ms;
    o->fn = fn;
    o->fn_arg = arg;
    o->slot = type == HT_MSG_REQUEST ? slot : NULL; /* a one-way's ends at on_message */
    ht_fire_sent(m, &env, o->frame_len, p->url, &slot);
    rc = on_loop ? ht_tr_submit_out(m, o) : ht_tr_leave_push(m, &o->cmd);
    if (rc != 0)
      ht_tr_out_discard(o);
  } else if (!on_loop) {
    ht_tr_leave(m);
  }
  ht_fire_send_failed(m, rc, type, slot);
  return rc;
}

int ht_peer_request(ht_peer *peer, const char *operation,
                    const ht_payload *payload,
                    const ht_request_options *ropts, ht_reply_fn fn,
                    void *arg) {
  if (peer == NULL || fn == NULL)
    return HT_EINVAL;
  uint32_t timeout_ms = 0;
  if (ropts != NULL) {
    /* a caller's struct from an older header may end sooner */
    if (ropts->size < offsetof(ht_request_options, timeout_ms) +
                          sizeof(ropts->timeout_ms))
      return HT_EINVAL;
    timeout_ms = ropts->timeout_ms;
  }
  return send_msg(peer, HT_MSG_REQUEST, operation, payload, timeout_ms, fn,
                  arg);
}

int ht_peer_send(ht_peer *peer, const char *operation,
                 const ht_payload *payload) {
  if (peer == NULL)
    return HT_EINVAL;
  return send_msg(peer, HT_MSG_ONEWAY, operation, payload, 0, NULL, NULL);
}
