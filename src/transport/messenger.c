/* The messenger core: construction, the loop thread, the cross-thread
 * command queue (mutex + uv_async), synchronous calls onto the loop,
 * graceful drain and final close. Must never run a user
 * callback after ht_messenger_close returned, and never free the core
 * while an ht_request token still points at it. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "hoptrace/error.h"
#include "transport/fire.h"

typedef struct ht_tr_call {
  ht_tr_cmd cmd;
  int (*fn)(ht_messenger *, void *);
  void *arg;
  int rc;
  bool done;
} ht_tr_call;

bool ht_tr_on_loop(const ht_messenger *m) {
  return pthread_equal(pthread_self(), m->loop_tid) != 0;
}

void ht_tr_unref(ht_messenger *m) {
  if (atomic_fetch_sub(&m->refs, 1) != 1)
    return;
  pthread_mutex_destroy(&m->lock);
  pthread_cond_destroy(&m->cond);
  free(m);
}

/* Caller holds m->lock. */
static void push_locked(ht_messenger *m, ht_tr_cmd *cmd) {
  cmd->next = NULL;
  bool was_empty = m->q_head == NULL;
  if (m->q_tail != NULL)
    m->q_tail->next = cmd;
  else
    m->q_head = cmd;
  m->q_tail = cmd;
  if (was_empty)
    uv_async_send(&m->async);
}

int ht_tr_enter(ht_messenger *m) {
  pthread_mutex_lock(&m->lock);
  int rc = m->closed ? HT_ESHUTDOWN : 0;
  if (rc == 0)
    m->foreign_calls++;
  pthread_mutex_unlock(&m->lock);
  return rc;
}

static void leave_locked(ht_messenger *m) {
  if (--m->foreign_calls == 0 && m->closed)
    pthread_cond_broadcast(&m->cond);
}

void ht_tr_leave(ht_messenger *m) {
  pthread_mutex_lock(&m->lock);
  leave_locked(m);
  pthread_mutex_unlock(&m->lock);
}

int ht_tr_leave_push(ht_messenger *m, ht_tr_cmd *cmd) {
  pthread_mutex_lock(&m->lock);
  int rc = m->closed ? HT_ESHUTDOWN : 0;
  if (rc == 0)
    push_locked(m, cmd);
  leave_locked(m);
  pthread_mutex_unlock(&m->lock);
  return rc;
}

int ht_tr_run_on_loop(ht_messenger *m, int (*fn)(ht_messenger *, void *),
                   void *arg) {
  if (ht_tr_on_loop(m))
    return fn(m, arg);
  if (!m->own_thread)
    return HT_EPERM;
  ht_tr_call call = {.cmd.kind = TR_CMD_CALL, .fn = fn, .arg = arg};
  pthread_mutex_lock(&m->lock);
  if (m->closed) {
    pthread_mutex_unlock(&m->lock);
    return HT_ESHUTDOWN;
  }
  push_locked(m, &call.cmd);
  while (!call.done)
    pthread_cond_wait(&m->cond, &m->lock);
  pthread_mutex_unlock(&m->lock);
  return call.rc;
}

static void finish_call(ht_messenger *m, ht_tr_call *call, int rc) {
  pthread_mutex_lock(&m->lock);
  call->rc = rc;
  call->done = true;
  pthread_cond_broadcast(&m->cond);
  pthread_mutex_unlock(&m->lock);
}

static void final_close(ht_messenger *m);

/* Runs (or, when failing, fails) one command. */
static void run_cmd(ht_messenger *m, ht_tr_cmd *cmd, int fail) {
  switch (cmd->kind) {
  case TR_CMD_OUT: {
    ht_tr_out *o = (ht_tr_out *)cmd;
    int rc = fail != 0 ? fail : ht_tr_submit_out(m, o);
    if (rc != 0)
      ht_tr_out_fail(o, rc);
    break;
  }
  case TR_CMD_CALL: {
    ht_tr_call *call = (ht_tr_call *)cmd;
    finish_call(m, call, fail != 0 ? fail : call->fn(m, call->arg));
    break;
  }
  case TR_CMD_SHUTDOWN:
    if (fail == 0)
      final_close(m);
    break;
  case TR_CMD_NOTICE:
    ht_tr_notice_run(m, cmd, fail);
    break;
  }
}

static ht_tr_cmd *take_queue(ht_messenger *m, bool close_it) {
  pthread_mutex_lock(&m->lock);
  ht_tr_cmd *q = m->q_head;
  m->q_head = m->q_tail = NULL;
  if (close_it)
    m->closed = true;
  pthread_mutex_unlock(&m->lock);
  return q;
}

static void on_async(uv_async_t *a) {
  ht_messenger *m = a->data;
  ht_tr_cmd *q = take_queue(m, false);
  while (q != NULL) {
    ht_tr_cmd *next = q->next;
    run_cmd(m, q, m->state == TR_CLOSING ? HT_ESHUTDOWN : 0);
    q = next;
  }
}

/* After every loop iteration's I/O: write what the callbacks queued (one
 * writev per connection), and notice the end of a graceful drain. */
static void on_check(uv_check_t *h) {
  ht_tr_conn_flush_all(h->data);
  ht_tr_check_drained(h->data);
}
static void on_prepare(uv_prepare_t *h) { ht_tr_conn_flush_all(h->data); }

static void set_drained(ht_messenger *m, bool timed_out) {
  pthread_mutex_lock(&m->lock);
  m->drained = true;
  m->drain_timed_out = timed_out;
  pthread_cond_broadcast(&m->cond);
  pthread_mutex_unlock(&m->lock);
}

void ht_tr_check_drained(ht_messenger *m) {
  if (m->state != TR_DRAINING || m->drained)
    return;
  if (m->pending_total == 0 && m->queued_total == 0 &&
      atomic_load(&m->tokens_open) == 0)
    set_drained(m, false);
}

static void on_drain_timer(uv_timer_t *t) {
  ht_messenger *m = t->data;
  if (!m->drained) {
    ht_tr_log(m, HT_LOG_WARN,
           "drain deadline: %zu requests pending, %zu requests unanswered",
           m->pending_total, (size_t)atomic_load(&m->tokens_open));
    set_drained(m, true);
  }
}

static void close_listeners(ht_messenger *m) {
  while (m->listeners != NULL) {
    ht_tr_listener *l = m->listeners;
    m->listeners = l->next;
    ht_tr_listener_close(l);
  }
}

static int start_drain(ht_messenger *m, void *arg) {
  uint32_t ms = *(const uint32_t *)arg;
  m->state = TR_DRAINING;
  atomic_store(&m->accepting, false);
  close_listeners(m);
  uv_timer_start(&m->drain_timer, on_drain_timer, ms, 0);
  ht_tr_check_drained(m);
  return 0;
}

/* Loop thread: closes every handle; the loop then runs out of work. */
static void final_close(ht_messenger *m) {
  m->state = TR_CLOSING;
  atomic_store(&m->accepting, false);
  ht_tr_cmd *q = take_queue(m, true);
  while (q != NULL) {
    ht_tr_cmd *next = q->next;
    run_cmd(m, q, HT_ESHUTDOWN);
    q = next;
  }
  close_listeners(m);
  while (m->peers != NULL)
    ht_tr_peer_close_on_loop(m->peers, HT_ESHUTDOWN);
  for (ht_tr_conn *c = m->conns; c != NULL; c = c->next)
    ht_tr_conn_close(c, HT_ESHUTDOWN);
  while (m->flush_list != NULL) {
    ht_tr_conn *c = m->flush_list;
    m->flush_list = c->flush_next;
    c->in_flush = false;
    ht_tr_conn_unref(c);
  }
  uv_close((uv_handle_t *)&m->async, ht_tr_handle_closed);
  uv_close((uv_handle_t *)&m->check, ht_tr_handle_closed);
  uv_close((uv_handle_t *)&m->prepare, ht_tr_handle_closed);
  uv_close((uv_handle_t *)&m->timeout_timer, ht_tr_handle_closed);
  uv_close((uv_handle_t *)&m->drain_timer, ht_tr_handle_closed);
  uv_close((uv_handle_t *)&m->frame_timer, ht_tr_handle_closed);
}

void ht_tr_handle_closed(uv_handle_t *h) {
  ht_messenger *m = h->data;
  m->open_handles--;
}

static void *loop_main(void *arg) {
  ht_messenger *m = arg;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL); /* SIGPIPE becomes EPIPE here */
  uv_run(m->loop, UV_RUN_DEFAULT);
  return NULL;
}

static int init_handles(ht_messenger *m) {
  int rc = uv_async_init(m->loop, &m->async, on_async);
  if (rc != 0)
    return HT_EIO;
  uv_check_init(m->loop, &m->check);
  uv_prepare_init(m->loop, &m->prepare);
  uv_timer_init(m->loop, &m->timeout_timer);
  uv_timer_init(m->loop, &m->drain_timer);
  uv_timer_init(m->loop, &m->frame_timer);
  m->async.data = m->check.data = m->prepare.data = m;
  m->timeout_timer.data = m->drain_timer.data = m->frame_timer.data = m;
  m->open_handles = 6;
  uv_check_start(&m->check, on_check);
  uv_prepare_start(&m->prepare, on_prepare);
  return 0;
}

static void free_parts(ht_messenger *m) {
  ht_tr_handlers_free(m); /* their hook states: before destroy */
  free(m->heap);
  free(m->readbuf);
  free(m->name);
  ht_fire_destroy(m);
}

static int setup(ht_messenger *m, const ht_messenger_options *opts) {
  int rc = ht_tr_options_merge(&m->opts, opts);
  if (rc != 0)
    return rc;
  m->name = strdup(m->opts.name != NULL ? m->opts.name : "hoptrace");
  m->opts.name = m->name;
  m->readbuf = malloc(TR_READ_BUF);
  if (m->name == NULL || m->readbuf == NULL)
    return HT_ENOMEM;
  if (m->opts.loop != NULL) {
    m->loop = m->opts.loop;
    m->loop_tid = pthread_self();
  } else {
    if (uv_loop_init(&m->own_loop) != 0)
      return HT_EIO;
    m->loop = &m->own_loop;
    m->own_thread = true;
  }
  rc = init_handles(m);
  if (rc != 0 && m->own_thread)
    uv_loop_close(&m->own_loop);
  return rc;
}

int ht_transport_messenger_new(ht_messenger **out,
                               const ht_messenger_options *opts,
                               const ht_transport_hooks *hooks,
                               void *hooks_arg) {
  ht_messenger *m = out != NULL ? calloc(1, sizeof(*m)) : NULL;
  if (m == NULL) {
    if (hooks != NULL && hooks->destroy != NULL)
      hooks->destroy(hooks_arg);
    return out == NULL ? HT_EINVAL : HT_ENOMEM;
  }
  atomic_init(&m->refs, 1);
  pthread_mutex_init(&m->lock, NULL);
  pthread_cond_init(&m->cond, NULL);
  atomic_init(&m->accepting, true);
  atomic_init(&m->tokens_open, 0);
  atomic_init(&m->next_seq, 1);
  m->timer_due = UINT64_MAX;
  if (hooks != NULL) {
    m->has_hooks = true;
    m->hooks = *hooks;
    m->hooks_arg = hooks_arg;
  }
  if (m->hooks.dispatch_slot_size > HT_HOOK_SLOT_MAX) {
    ht_fire_destroy(m);
    free(m);
    return HT_EINVAL;
  }
  int rc = setup(m, opts);
  if (rc == 0 && m->own_thread &&
      pthread_create(&m->thread, NULL, loop_main, m) != 0) {
    final_close(m);
    uv_run(m->loop, UV_RUN_DEFAULT);
    uv_loop_close(m->loop);
    rc = HT_EIO;
  }
  if (rc != 0) {
    free_parts(m);
    ht_tr_unref(m);
    return rc;
  }
  if (m->own_thread)
    m->loop_tid = m->thread;
  *out = m;
  return 0;
}

int ht_messenger_close(ht_messenger *m, uint32_t drain_ms) {
  if (m == NULL)
    return HT_EINVAL;
  if (m->own_thread && ht_tr_on_loop(m))
    return HT_EPERM;
  int rc = 0;
  if (drain_ms > 0) {
    ht_tr_run_on_loop(m, start_drain, &drain_ms);
    pthread_mutex_lock(&m->lock);
    while (m->own_thread && !m->drained)
      pthread_cond_wait(&m->cond, &m->lock);
    pthread_mutex_unlock(&m->lock);
    while (!m->own_thread && !m->drained)
      uv_run(m->loop, UV_RUN_ONCE);
    rc = m->drain_timed_out ? HT_ETIMEDOUT : 0;
  }
  if (m->own_thread) {
    static ht_tr_cmd shutdown = {.kind = TR_CMD_SHUTDOWN};
    ht_tr_cmd cmd = shutdown;
    pthread_mutex_lock(&m->lock);
    push_locked(m, &cmd);
    pthread_mutex_unlock(&m->lock);
    pthread_join(m->thread, NULL);
    uv_loop_close(&m->own_loop);
  } else {
    final_close(m);
    while (m->open_handles > 0)
      uv_run(m->loop, UV_RUN_ONCE);
  }
  pthread_mutex_lock(&m->lock);
  while (m->foreign_calls > 0)
    pthread_cond_wait(&m->cond, &m->lock);
  pthread_mutex_unlock(&m->lock);
  free_parts(m);
  ht_tr_unref(m);
  return rc;
}
