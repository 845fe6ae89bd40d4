/* Internal structures of the transport, shared by its files only.
 *
 * Ownership and threads in one place:
 *  - Everything here is touched on the loop thread only, except the
 *    fields marked [any]: atomics, or guarded by ht_messenger.lock.
 *  - ht_tr_out is one outgoing frame (request, one-way, reply, or a "drop"
 *    notice of a request answered by nobody). It is freed once it is both
 *    written (or failed) and, for requests, settled (reply callback run).
 *  - Connections, peers and the messenger are reference counted because
 *    ht_request tokens and queued commands outlive loop-side closes.
 * Never include this from outside src/transport/ (shim/ uses hooks.h).
 * Hook calls go through fire.h, which includes this.
 */
#ifndef HT_TRANSPORT_INTERNAL_H
#define HT_TRANSPORT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "hoptrace/messenger.h"
#include "hoptrace/wire.h"
#include "common/counters.h"
#include "transport/hooks.h"

#define TR_NAME_MAX 128       /* peer names: "tcp://[v6]:port", unix paths */
#define TR_READ_BUF (64u * 1024u)
#define TR_NO_HEAP SIZE_MAX

typedef struct ht_tr_conn ht_tr_conn;
typedef struct ht_tr_listener ht_tr_listener;

/* An item of the cross-thread command queue. */
typedef enum ht_tr_cmd_kind {
  TR_CMD_OUT = 1,     /* a ht_tr_out to submit */
  TR_CMD_CALL = 2,    /* run a function on the loop, wake the caller */
  TR_CMD_SHUTDOWN = 3, /* final close (from ht_messenger_close) */
  TR_CMD_NOTICE = 4    /* a ht_tr_notice to send (notice.c) */
} ht_tr_cmd_kind;

typedef struct ht_tr_cmd {
  struct ht_tr_cmd *next;
  ht_tr_cmd_kind kind;
} ht_tr_cmd;

typedef enum ht_tr_out_kind {
  TR_OUT_REQUEST = HT_MSG_REQUEST,
  TR_OUT_REPLY = HT_MSG_REPLY,
  TR_OUT_ONEWAY = HT_MSG_ONEWAY,
  TR_OUT_ERROR = HT_MSG_ERROR,
  TR_OUT_DROP = 100 /* no frame: a token given up */
} ht_tr_out_kind;

typedef struct ht_tr_out {
  ht_tr_cmd cmd;          /* cmd.next also links the outq and write batches */
  ht_tr_out_kind kind;
  bool written;        /* write completed or failed */
  bool settled;        /* request: outcome delivered */
  ht_peer *peer;       /* request/one-way: target, referenced */
  ht_tr_conn *reply_conn; /* reply/error/drop: target, referenced */
  ht_tr_conn *pend_conn;  /* request: the conn whose pending table holds it */
  ht_payload payload;
  void *copy;          /* our copy of the payload (inside this block) */
  size_t frame_len;    /* header + payload */
  /* request only */
  uint64_t seq;
  uint32_t timeout_ms;
  uint64_t deadline;
  size_t heap_index;
  struct ht_tr_out *hnext; /* pending hash chain */
  ht_reply_fn fn;
  void *fn_arg;
  void *slot; /* hooks' per-request slot */
  size_t header_len;
  uint8_t header[];
} ht_tr_out;

typedef enum ht_tr_conn_state {
  TR_CONN_CONNECTING = 0,
  TR_CONN_OPEN = 1,
  TR_CONN_CLOSING = 2
} ht_tr_conn_state;

struct ht_tr_conn {
  atomic_int refs;    /* [any] loop 1 until closed + tokens + batches */
  atomic_int state;   /* [any] ht_tr_conn_state; read by tokens */
  ht_messenger *m;
  union {
    uv_handle_t h;
    uv_stream_t s;
    uv_tcp_t tcp;
    uv_pipe_t pipe;
  } u;
  ht_peer *peer;         /* outgoing: owner (referenced); NULL if accepted */
  ht_tr_listener *listener; /* accepted: its listener */
  ht_frame_reader *reader;
  uv_connect_t connect_req;
  ht_tr_out *outq_head, *outq_tail; /* accepted, not yet handed to uv_write */
  size_t wq_bytes;               /* queued or being written */
  size_t wq_msgs;
  ht_tr_out **buckets; /* pending requests by sequence */
  size_t nbuckets, npending;
  uint32_t inflight; /* dispatched requests not yet answered */
  bool partial;           /* the reader holds part of a frame ... */
  uint64_t partial_since; /* ... since this loop time (ms), reading */
  bool reading;
  bool in_flush;
  int close_reason;
  ht_tr_conn *flush_next;
  ht_tr_conn *prev, *next; /* m->conns */
  ht_hook_origin origin; /* name, the hooks' state (conn_init), and the
                            handler's (set at each dispatch) */
  char name[TR_NAME_MAX];
};

typedef struct ht_tr_addr {
  bool is_unix;
  struct sockaddr_storage ss;
  char path[108];
} ht_tr_addr;

struct ht_peer {
  atomic_int refs; /* [any] user handle + timer + conns + queued outs */
  ht_messenger *m;
  char *url;
  uint64_t serial; /* the process's peers' count when made (hooks.h) */
  ht_tr_addr addr;
  ht_tr_conn *conn;             /* current connection (CONNECTING/OPEN) */
  atomic_bool closing;       /* [any] */
  atomic_bool usable;        /* [any] false while backing off */
  atomic_bool connected;     /* [any] */
  atomic_size_t q_bytes;     /* [any] reserved write budget */
  atomic_size_t q_msgs;      /* [any] */
  atomic_bool want_writable; /* [any] a send hit HT_EQUEUEFULL */
  ht_writable_fn wfn;
  void *warg;
  uv_timer_t timer; /* back-off and connect timeout */
  uint32_t backoff_ms;
  ht_peer *prev, *next; /* m->peers */
};

struct ht_tr_listener {
  ht_messenger *m;
  union {
    uv_handle_t h;
    uv_stream_t s;
    uv_tcp_t tcp;
    uv_pipe_t pipe;
  } u;
  bool is_unix;
  char path[108];
  uint32_t nconns;
  ht_tr_listener *next;
};

struct ht_request {
  ht_messenger *m; /* referenced */
  ht_tr_conn *conn;   /* referenced */
  uint64_t seq;
  void *slot;      /* hooks' dispatch slot */
  const ht_trace_context *reply_trace; /* stamped into the reply, or NULL */
  const char *op;  /* in tail, after the slot storage */
  /* hooks.dispatch_slot_size bytes (rounded up), then op */
  _Alignas(max_align_t) unsigned char tail[];
};

typedef struct ht_tr_handler {
  char *op; /* NULL: default */
  ht_handler_fn fn;
  void *arg;
  void *hook_state; /* what the hooks' handler_init returned (hooks.h) */
} ht_tr_handler;

typedef enum ht_tr_state {
  TR_RUNNING = 0,
  TR_DRAINING = 1,
  TR_CLOSING = 2
} ht_tr_state;

struct ht_messenger {
  atomic_int refs; /* [any] user + open tokens */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  ht_tr_cmd *q_head, *q_tail; /* [lock] */
  bool closed;             /* [lock] no more commands */
  int foreign_calls;       /* [lock] other threads inside a send/reply */
  bool drained;            /* [lock] graceful drain finished */
  bool drain_timed_out;    /* [lock] */
  atomic_bool accepting;   /* [any] new sends allowed */
  atomic_size_t tokens_open; /* [any] */
  atomic_uint_fast64_t next_seq;

  uv_loop_t own_loop;
  uv_loop_t *loop;
  bool own_thread;
  pthread_t thread;
  pthread_t loop_tid;
  uv_async_t async;
  uv_check_t check;
  uv_prepare_t prepare;
  uv_timer_t timeout_timer;
  uv_timer_t drain_timer;
  uv_timer_t frame_timer; /* slow-frame sweep; runs while any conn->partial */
  int open_handles;
  uint64_t timer_due; /* UINT64_MAX: not armed */

  ht_messenger_options opts;
  char *name;
  bool has_hooks;            /* hooks all zero when false: fire.h */
  ht_transport_hooks hooks;
  void *hooks_arg;

  ht_tr_handler *handlers;
  size_t nhandlers;
  ht_tr_handler deflt;

  ht_tr_state state;
  ht_tr_out **heap;
  size_t heap_n, heap_cap;
  size_t pending_total;
  size_t queued_total;
  ht_tr_conn *conns;
  ht_peer *peers;
  ht_tr_listener *listeners;
  ht_tr_conn *flush_list;
  uint8_t *readbuf;
};

/* messenger.c */
bool ht_tr_on_loop(const ht_messenger *m);
int ht_tr_run_on_loop(ht_messenger *m, int (*fn)(ht_messenger *, void *),
                   void *arg);
int ht_tr_enter(ht_messenger *m);
int ht_tr_leave_push(ht_messenger *m, ht_tr_cmd *cmd);
void ht_tr_leave(ht_messenger *m);
void ht_tr_unref(ht_messenger *m);
void ht_tr_handle_closed(uv_handle_t *h); /* generic: open_handles-- */
ht_tr_handler *ht_tr_find_handler(ht_messenger *m, const char *op);
/* Frees the table, each handler's hook state to handler_fini first. */
void ht_tr_handlers_free(ht_messenger *m);
void ht_tr_check_drained(ht_messenger *m);

/* options.c */
int ht_tr_options_merge(ht_messenger_options *dst,
                     const ht_messenger_options *src);

/* log.c */
void ht_tr_log(const ht_messenger *m, ht_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* address.c */
int ht_tr_addr_parse(const char *url, ht_tr_addr *out);
void ht_tr_addr_name(const struct sockaddr *sa, bool is_unix, const char *path,
                  char *buf, size_t cap);

/* out.c */
int ht_tr_out_new(const ht_envelope *env, const ht_payload *payload,
               ht_tr_out **out);
void ht_tr_out_discard(ht_tr_out *out); /* never accepted: no callbacks */
void ht_tr_out_written(ht_tr_out *out, int status);
void ht_tr_out_settle(ht_tr_out *out, int status, const ht_envelope *reply,
                      size_t reply_len);
void ht_tr_out_fail(ht_tr_out *out, int status);
void ht_tr_out_maybe_free(ht_tr_out *out);

/* pending.c */
int ht_tr_pending_add(ht_tr_conn *c, ht_tr_out *out);
ht_tr_out *ht_tr_pending_take(ht_tr_conn *c, uint64_t seq);
void ht_tr_pending_fail_all(ht_tr_conn *c, int status);
void ht_tr_pending_free(ht_tr_conn *c);
int ht_tr_timeouts_add(ht_messenger *m, ht_tr_out *out);
void ht_tr_timeouts_remove(ht_messenger *m, ht_tr_out *out);
void ht_tr_timeouts_fire(uv_timer_t *t);

/* conn.c */
ht_tr_conn *ht_tr_conn_new(ht_messenger *m, bool is_unix);
void ht_tr_conn_ref(ht_tr_conn *c);
void ht_tr_conn_unref(ht_tr_conn *c);
void ht_tr_conn_start_reading(ht_tr_conn *c);
void ht_tr_conn_close(ht_tr_conn *c, int reason);
void ht_tr_conn_enqueue(ht_tr_conn *c, ht_tr_out *out);
void ht_tr_conn_flush_all(ht_messenger *m);
void ht_tr_conn_update_reading(ht_tr_conn *c);
void ht_tr_conn_sweep_slow_frames(uv_timer_t *t);

/* dispatch.c */
/* frame_len: the frame as received, prefix included. */
void ht_tr_dispatch(ht_tr_conn *c, const ht_envelope *env, size_t frame_len);

/* peer.c */
void ht_tr_peer_unref(ht_peer *p);
void ht_tr_peer_release_budget(ht_peer *p, size_t bytes);
void ht_tr_peer_conn_lost(ht_peer *p, ht_tr_conn *c);
void ht_tr_peer_close_on_loop(ht_peer *p, int reason);
int ht_tr_submit_out(ht_messenger *m, ht_tr_out *out);
/* A one-way of the transport's own (a notice, hooks.h) to p, past no
 * hook: within p's write budget (HT_EQUEUEFULL), on the loop thread. */
int ht_tr_peer_send_own(ht_peer *p, const ht_envelope *env);

/* notice.c: a queued notice, run (sent or dropped) and freed on the loop */
void ht_tr_notice_run(ht_messenger *m, ht_tr_cmd *cmd, int fail);
/* Whether env is a notice (HT_NOTICE_OP one-way): the transport's own */
bool ht_tr_is_notice(const ht_envelope *env);

/* listener.c */
void ht_tr_listener_close(ht_tr_listener *l);

/* request.c */
int ht_tr_request_new(ht_tr_conn *c, const ht_envelope *env, ht_request **out);
/* The request's dispatch slot storage (hooks.dispatch_slot_size > 0). */
static inline void *ht_tr_request_storage(ht_request *req) { return req->tail; }

#endif /* HT_TRANSPORT_INTERNAL_H */
