/* One connection (accepted or outgoing): read frames into the dispatcher,
 * write queued frames in batches (one writev per connection per loop
 * iteration), and close exactly once, failing what it still holds.
 * Must never free the struct while a token, a write or the loop holds a
 * reference, and never read while its replies are backed up (server
 * side back-pressure). Loop thread only, except refs and state. */
#include <stdlib.h>
#include <string.h>

#include "hoptrace/error.h"
#include "transport/fire.h"

#define BATCH_MAX 256u
/* Bytes after which a batch ends (keeps a batch's size well inside int:
 * one frame is at most HT_FRAME_HARD_MAX). */
#define BATCH_BYTES (1024u * 1024u)

typedef struct ht_tr_batch {
  uv_write_t req;
  ht_tr_conn *conn;
  ht_tr_out *chain;
} ht_tr_batch;

ht_tr_conn *ht_tr_conn_new(ht_messenger *m, bool is_unix) {
  ht_tr_conn *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return NULL;
  if (ht_frame_reader_new(m->opts.max_frame, &c->reader) != 0) {
    free(c);
    return NULL;
  }
  int rc = is_unix ? uv_pipe_init(m->loop, &c->u.pipe, 0)
                   : uv_tcp_init(m->loop, &c->u.tcp);
  if (rc != 0) {
    ht_frame_reader_free(c->reader);
    free(c);
    return NULL;
  }
  atomic_init(&c->refs, 1);
  atomic_init(&c->state, TR_CONN_CONNECTING);
  c->m = m;
  c->origin = (ht_hook_origin){c->name, ht_fire_conn_init(m), NULL};
  c->u.h.data = c;
  m->open_handles++;
  c->next = m->conns;
  if (m->conns != NULL)
    m->conns->prev = c;
  m->conns = c;
  return c;
}

void ht_tr_conn_ref(ht_tr_conn *c) { atomic_fetch_add(&c->refs, 1); }

void ht_tr_conn_unref(ht_tr_conn *c) {
  if (atomic_fetch_sub(&c->refs, 1) == 1)
    free(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  ht_tr_conn *c = h->data;
  *buf = uv_buf_init((char *)c->m->readbuf, TR_READ_BUF);
}

/* --- slow frames: a frame must be whole frame_timeout_ms after its first
 * byte, or the connection closes. Without this a peer that announces a
 * big frame and then drips (or stalls) holds its buffer for ever, on up
 * to max_connections connections. The clock runs only while the
 * connection is read (back-pressure pauses it, a resume restarts it). */

static uint64_t sweep_interval(const ht_messenger *m) {
  uint64_t ms = m->opts.frame_timeout_ms / 4;
  return ms < 10 ? 10 : ms > 1000 ? 1000 : ms;
}

/* After input: starts, restarts (a new frame began) or ends the clock. */
static void note_partial_frame(ht_tr_conn *c, bool delivered) {
  bool partial = ht_frame_reader_buffered(c->reader) > 0;
  if (partial && (!c->partial || delivered))
    c->partial_since = uv_now(c->m->loop);
  c->partial = partial;
  if (partial && !uv_is_active((uv_handle_t *)&c->m->frame_timer)) {
    uint64_t every = sweep_interval(c->m);
    uv_timer_start(&c->m->frame_timer, ht_tr_conn_sweep_slow_frames, every, every);
  }
}

void ht_tr_conn_sweep_slow_frames(uv_timer_t *t) {
  ht_messenger *m = t->data;
  uint64_t now = uv_now(m->loop);
  bool any = false;
  for (ht_tr_conn *c = m->conns; c != NULL; c = c->next) {
    if (!c->partial || atomic_load(&c->state) != TR_CONN_OPEN)
      continue;
    if (c->reading && now - c->partial_since >= m->opts.frame_timeout_ms) {
      ht_tr_log(m, HT_LOG_WARN,
             "%s: closing connection: frame incomplete after %llu ms "
             "(%zu bytes held)",
             c->name, (unsigned long long)(now - c->partial_since),
             ht_frame_reader_buffered(c->reader));
      ht_tr_conn_close(c, HT_ECONNRESET); /* unlinked later, in on_closed */
      continue;
    }
    any = true;
  }
  if (!any)
    uv_timer_stop(t);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  ht_tr_conn *c = s->data;
  if (nread < 0) {
    if (nread != UV_EOF)
      ht_tr_log(c->m, HT_LOG_INFO, "%s: read: %s", c->name,
             uv_strerror((int)nread));
    ht_tr_conn_close(c, HT_ECONNRESET);
    return;
  }
  const uint8_t *p = (const uint8_t *)buf->base;
  size_t left = (size_t)nread;
  bool delivered = false;
  while (left > 0 && atomic_load(&c->state) == TR_CONN_OPEN) {
    ht_envelope env;
    size_t used = 0;
    int rc = ht_frame_reader_feed(c->reader, p, left, &used, &env);
    p += used;
    left -= used;
    if (rc == HT_EAGAIN)
      break;
    if (rc != 0) {
      ht_tr_log(c->m, HT_LOG_WARN, "%s: closing connection: bad frame: %s",
             c->name, ht_strerror(rc));
      ht_tr_conn_close(c, HT_ECONNRESET);
      return;
    }
    delivered = true;
    ht_tr_dispatch(c, &env, ht_frame_reader_frame_len(c->reader));
  }
  if (atomic_load(&c->state) == TR_CONN_OPEN)
    note_partial_frame(c, delivered);
}

/* Reading stops on an accepted connection while it has too many requests
 * in its handlers or too many bytes of replies queued: a client that does
 * not read its replies cannot make this process buffer without bound. */
void ht_tr_conn_update_reading(ht_tr_conn *c) {
  if (atomic_load(&c->state) != TR_CONN_OPEN)
    return;
  const ht_messenger_options *o = &c->m->opts;
  bool want = c->peer != NULL ||
              (c->inflight < o->max_inflight && c->wq_bytes < o->write_queue_bytes &&
               c->wq_msgs < o->write_queue_msgs);
  if (want == c->reading)
    return;
  if (want) {
    uv_read_start(&c->u.s, on_alloc, on_read);
    c->partial_since = uv_now(c->m->loop); /* the sender waited for us */
  } else {
    uv_read_stop(&c->u.s);
  }
  c->reading = want;
}

static void schedule_flush(ht_tr_conn *c) {
  if (c->in_flush)
    return;
  c->in_flush = true;
  ht_tr_conn_ref(c);
  c->flush_next = c->m->flush_list;
  c->m->flush_list = c;
}

void ht_tr_conn_start_reading(ht_tr_conn *c) {
  atomic_store(&c->state, TR_CONN_OPEN);
  c->reading = false;
  ht_tr_conn_update_reading(c);
  if (c->outq_head != NULL)
    schedule_flush(c); /* frames queued while connecting */
}

void ht_tr_conn_enqueue(ht_tr_conn *c, ht_tr_out *o) {
  o->cmd.next = NULL;
  if (c->outq_tail != NULL)
    c->outq_tail->cmd.next = &o->cmd;
  else
    c->outq_head = o;
  c->outq_tail = o;
  c->wq_bytes += o->frame_len;
  c->wq_msgs++;
  c->m->queued_total++;
  if (atomic_load(&c->state) == TR_CONN_OPEN)
    schedule_flush(c);
}

/* Ends the write side of every frame in chain. */
static void complete_chain(ht_tr_conn *c, ht_tr_out *chain, int status) {
  ht_messenger *m = c->m;
  while (chain != NULL) {
    ht_tr_out *next = (ht_tr_out *)chain->cmd.next;
    c->wq_bytes -= chain->frame_len;
    c->wq_msgs--;
    m->queued_total--;
    ht_tr_out_written(chain, status);
    ht_tr_out_maybe_free(chain);
    chain = next;
  }
}

static void notify_writable(ht_peer *p) {
  if (p == NULL || !atomic_load(&p->want_writable) || p->wfn == NULL)
    return;
  const ht_messenger_options *o = &p->m->opts;
  if (atomic_load(&p->q_bytes) > o->write_queue_bytes / 2 ||
      atomic_load(&p->q_msgs) > o->write_queue_msgs / 2)
    return;
  atomic_store(&p->want_writable, false);
  p->wfn(p->warg, p);
}

/* After frames of c finished writing: tell a waiting sender, resume
 * reading a server connection, notice the end of a drain. */
static void after_writes(ht_tr_conn *c) {
  if (atomic_load(&c->state) == TR_CONN_OPEN) {
    if (c->peer != NULL && !atomic_load(&c->peer->closing))
      notify_writable(c->peer);
    else
      ht_tr_conn_update_reading(c);
  }
  ht_tr_check_drained(c->m);
}

static void on_write(uv_write_t *req, int status) {
  ht_tr_batch *b = req->data;
  ht_tr_conn *c = b->conn;
  int st = status == 0 ? 0 : (c->close_reason != 0 ? c->close_reason : HT_ECONNRESET);
  complete_chain(c, b->chain, st);
  free(b);
  if (status != 0 && status != UV_ECANCELED) {
    ht_tr_log(c->m, HT_LOG_INFO, "%s: write: %s", c->name, uv_strerror(status));
    ht_tr_conn_close(c, HT_ECONNRESET);
  }
  after_writes(c);
  ht_tr_conn_unref(c);
}

/* Detaches up to BATCH_MAX frames from c's queue into bufs. */
static ht_tr_out *take_batch(ht_tr_conn *c, uv_buf_t *bufs, unsigned *nbufs,
                          size_t *bytes) {
  unsigned n = 0, k = 0;
  size_t total = 0;
  ht_tr_out *first = c->outq_head, *o = first, *last = NULL;
  for (; o != NULL && k < BATCH_MAX && total < BATCH_BYTES;
       o = (ht_tr_out *)o->cmd.next, k++) {
    bufs[n++] = uv_buf_init((char *)o->header, (unsigned)o->header_len);
    if (o->payload.len > 0) {
      const void *data = o->copy != NULL ? o->copy : o->payload.data;
      bufs[n++] = uv_buf_init((char *)(uintptr_t)data, (unsigned)o->payload.len);
    }
    total += o->frame_len;
    last = o;
  }
  c->outq_head = o;
  if (o == NULL)
    c->outq_tail = NULL;
  last->cmd.next = NULL;
  *nbufs = n;
  *bytes = total;
  return first;
}

/* Drops the first `done` bytes from bufs; returns the first buffer left. */
static unsigned skip_written(uv_buf_t *bufs, unsigned n, size_t done) {
  unsigned i = 0;
  while (i < n && done >= bufs[i].len)
    done -= bufs[i++].len;
  if (i < n && done > 0) {
    bufs[i].base += done;
    bufs[i].len -= (unsigned)done;
  }
  return i;
}

/* Writes one batch: first synchronously (uv_try_write: no request, no
 * poll re-arm when the socket takes it all, the common case), the rest
 * through uv_write. */
static int flush_batch(ht_tr_conn *c) {
  uv_buf_t bufs[2 * BATCH_MAX];
  unsigned n;
  size_t bytes;
  ht_tr_out *first = take_batch(c, bufs, &n, &bytes);
  int wrote = uv_try_write(&c->u.s, bufs, n);
  if (wrote == (int)bytes) {
    complete_chain(c, first, 0);
    after_writes(c);
    return 0;
  }
  if (wrote < 0 && wrote != UV_EAGAIN) {
    complete_chain(c, first, HT_ECONNRESET);
    return HT_ECONNRESET;
  }
  unsigned from = wrote > 0 ? skip_written(bufs, n, (size_t)wrote) : 0;
  ht_tr_batch *b = malloc(sizeof(*b));
  if (b == NULL) {
    complete_chain(c, first, HT_ENOMEM);
    return HT_ENOMEM;
  }
  b->conn = c;
  b->chain = first;
  b->req.data = b;
  ht_tr_conn_ref(c);
  int rc = uv_write(&b->req, &c->u.s, bufs + from, n - from, on_write);
  if (rc != 0) {
    complete_chain(c, first, HT_ECONNRESET);
    free(b);
    ht_tr_conn_unref(c);
    return HT_ECONNRESET;
  }
  return 0;
}

static void flush(ht_tr_conn *c) {
  while (c->outq_head != NULL && atomic_load(&c->state) == TR_CONN_OPEN) {
    if (flush_batch(c) != 0) {
      ht_tr_conn_close(c, HT_ECONNRESET);
      return;
    }
  }
}

void ht_tr_conn_flush_all(ht_messenger *m) {
  while (m->flush_list != NULL) {
    ht_tr_conn *c = m->flush_list;
    m->flush_list = c->flush_next;
    c->in_flush = false;
    flush(c);
    ht_tr_conn_update_reading(c);
    ht_tr_conn_unref(c);
  }
}

static void on_closed(uv_handle_t *h) {
  ht_tr_conn *c = h->data;
  ht_messenger *m = c->m;
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    m->conns = c->next;
  if (c->next != NULL)
    c->next->prev = c->prev;
  ht_frame_reader_free(c->reader);
  c->reader = NULL;
  ht_tr_pending_free(c);
  ht_fire_conn_fini(m, c->origin.conn); /* every made conn closes once */
  c->origin.conn = NULL;
  if (c->peer != NULL)
    ht_tr_peer_unref(c->peer);
  m->open_handles--;
  ht_tr_check_drained(m);
  ht_tr_conn_unref(c);
}

/* Closes c once: every request waiting on it fails with `reason`, every
 * queued frame is dropped, writes in flight are cancelled by libuv. */
void ht_tr_conn_close(ht_tr_conn *c, int reason) {
  int state = atomic_load(&c->state);
  if (state == TR_CONN_CLOSING)
    return;
  atomic_store(&c->state, TR_CONN_CLOSING);
  c->close_reason = reason;
  if (c->listener != NULL)
    c->listener->nconns--;
  if (c->peer != NULL)
    ht_tr_peer_conn_lost(c->peer, c); /* before callbacks: sends see ENOTCONN */
  ht_tr_pending_fail_all(c, reason);
  ht_tr_out *q = c->outq_head;
  c->outq_head = c->outq_tail = NULL;
  complete_chain(c, q, reason);
  uv_close(&c->u.h, on_closed);
  ht_tr_check_drained(c->m);
}
