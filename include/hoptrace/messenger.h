/* The messenger: envelopes between processes over TCP and Unix sockets.
 *
 * An ht_messenger owns one libuv loop, either on a thread of its own
 * (default) or on a loop the caller runs. It listens on addresses, connects
 * to peers, sends requests (a correlation sequence pairs each with its
 * reply), one-way messages and replies, and dispatches incoming requests
 * and one-ways to handlers registered per operation.
 *
 * Addresses: "tcp://1.2.3.4:5678", "tcp://[::1]:5678", "tcp://localhost:N"
 * and "unix:///path/to/socket". Anything else is HT_EADDR.
 *
 * Every function returns 0 or a negative HT_E* code (hoptrace/error.h).
 *
 * Signals: the own loop thread blocks all signals (a write to a closed
 * socket then fails with EPIPE instead of raising SIGPIPE). With
 * opts.loop, ignore SIGPIPE in the application.
 *
 * Threads. "The loop thread" is the messenger's own thread, or, with
 * opts.loop, the thread that runs that loop. Every callback (handlers,
 * reply callbacks, payload `done`, writable, log) runs on the loop thread,
 * and never after ht_messenger_close returned. ht_peer_request,
 * ht_peer_send, ht_request_reply and ht_request_drop may be called from
 * any thread at any time (they hand the message to the loop through a
 * locked queue and a uv_async). The other calls may be made from any
 * thread with an own-thread messenger (they run on the loop thread and
 * wait for it; from inside a callback they run inline), and only from the
 * loop thread with opts.loop.
 *
 * Payload ownership on send (ht_payload): with `done` NULL the payload is
 * copied before the call returns, and the caller may reuse it at once.
 * With `done` set nothing is copied: the messenger borrows the bytes and
 * calls done(done_arg, status) exactly once on the loop thread when it no
 * longer needs them (status 0 once written to the socket, or the error
 * that dropped the message). If the send call itself returns an error,
 * done is not called and the caller still owns the payload.
 *
 * Receive: a handler or reply callback gets a `const ht_envelope *` whose
 * pointers (operation, payload) are valid only during that call. Keep a
 * message with ht_message_copy.
 */
#ifndef HOPTRACE_MESSENGER_H
#define HOPTRACE_MESSENGER_H

#include <stddef.h>
#include <stdint.h>

#include "hoptrace/api.h"
#include "hoptrace/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

struct uv_loop_s;

typedef struct ht_messenger ht_messenger;
typedef struct ht_peer ht_peer;       /* an outgoing peer (reconnecting) */
typedef struct ht_request ht_request; /* an incoming request to answer */

/* Which messenger ht_messenger_new builds. DEFAULT reads the environment
 * variable HT_MESSENGER ("plain" or "traced"; unset means plain). */
typedef enum ht_messenger_flavour {
  HT_MESSENGER_DEFAULT = 0,
  HT_MESSENGER_PLAIN = 1,
  HT_MESSENGER_TRACED = 2
} ht_messenger_flavour;

typedef enum ht_log_level {
  HT_LOG_ERROR = 0,
  HT_LOG_WARN = 1,
  HT_LOG_INFO = 2,
  HT_LOG_DEBUG = 3
} ht_log_level;

/* Log sink: runs on the loop thread (or the thread calling the messenger
 * function that logs); `msg` is valid for the call only. */
typedef void (*ht_log_fn)(void *arg, ht_log_level level, const char *msg);

/* Options. Always fill with ht_messenger_options_init first, then change
 * fields: new fields are appended over time, and `size` tells the library
 * which ones this caller knows. Zero in a numeric field means "default". */
typedef struct ht_messenger_options {
  size_t size;                   /* sizeof(ht_messenger_options) */
  ht_messenger_flavour flavour;  /* default HT_MESSENGER_DEFAULT */
  const char *name;              /* service name for logs and traces;
                                    copied; default "hoptrace" */
  struct uv_loop_s *loop;        /* NULL: own loop on an own thread */
  size_t max_frame;              /* incoming frame limit, prefix excluded;
                                    default HT_FRAME_DEFAULT_MAX */
  size_t write_queue_bytes;      /* per-peer bound; default 8 MiB */
  uint32_t write_queue_msgs;     /* per-peer bound; default 65536 */
  uint32_t request_timeout_ms;   /* default 30000; per call overridable */
  uint32_t max_inflight;         /* dispatched, unanswered requests per
                                    incoming connection before it stops
                                    being read; default 4096 */
  uint32_t max_connections;      /* accepted connections per listener;
                                    default 1024 */
  uint32_t connect_timeout_ms;   /* default 5000 */
  uint32_t reconnect_min_ms;     /* first back-off; default 50 */
  uint32_t reconnect_max_ms;     /* back-off cap; default 5000 */
  ht_log_level log_level;        /* default HT_LOG_WARN */
  ht_log_fn log;                 /* NULL: stderr */
  void *log_arg;
  uint32_t frame_timeout_ms;     /* an incoming frame must be whole this
                                    long after its first byte arrived, or
                                    the connection is closed (a slow or
                                    stalled sender holds memory); time
                                    while this side does not read
                                    (back-pressure) does not count;
                                    default 30000 */
} ht_messenger_options;

/* Fills *opts with the defaults and sets opts->size to the caller's
 * sizeof: the macro passes it to the _sized function, which writes only
 * the first `size` bytes (a later library never overruns a struct from
 * an older header). HT_EINVAL, *opts untouched, for NULL or a size below
 * 2.0's struct; else 0. */
HT_API int ht_messenger_options_init_sized(ht_messenger_options *opts,
                                           size_t size);
#define ht_messenger_options_init(opts)                                        \
  ht_messenger_options_init_sized((opts), sizeof *(opts))

/* Creates a messenger (opts NULL: defaults) and, without opts->loop,
 * starts its thread. opts and opts->name are not retained. With
 * opts->loop, the calling thread is taken as the loop thread; the caller
 * runs the loop. Errors: HT_EINVAL (also an unknown flavour, or
 * HT_MESSENGER set to neither "plain" nor "traced"), HT_ENOMEM, HT_EIO
 * (loop or thread creation failed). */
HT_API int ht_messenger_new(const ht_messenger_options *opts,
                            ht_messenger **out);

/* Closes and frees the messenger. drain_ms 0: immediate. Otherwise
 * graceful first: listeners stop accepting, new sends fail with
 * HT_ESHUTDOWN, incoming requests get an HT_ESHUTDOWN error reply, and the
 * call waits until every pending request has its reply, every handed-out
 * ht_request is answered and every write queue is empty, or drain_ms
 * passed. Then every connection closes; remaining reply callbacks get
 * HT_ESHUTDOWN and remaining payload `done` callbacks a negative status,
 * on the loop thread, before this returns. After it returns no callback
 * runs and every ht_peer handle is gone; ht_request handles still held
 * stay valid and answer HT_ESHUTDOWN. Other threads may keep sending
 * while the drain runs (HT_ESHUTDOWN); they must stop using ht_peer
 * handles before the drain ends. Returns 0, HT_ETIMEDOUT when the
 * drain deadline passed (the messenger is closed anyway), or HT_EPERM
 * (nothing done) when called on the messenger's own loop thread, i.e.
 * from one of its callbacks.
 * With opts->loop: call it on the loop thread outside uv_run; it runs the
 * loop itself until the messenger's handles are closed. */
HT_API int ht_messenger_close(ht_messenger *m, uint32_t drain_ms);

/* --- listening and handlers */

/* Listens on url. If bound is not NULL, the actual address (port 0
 * resolved) is written there as a URL, NUL-terminated (HT_ENOSPC if cap is
 * too small; the listener stays). An existing Unix socket file is
 * replaced; its file is removed when the listener closes. Errors:
 * HT_EADDR, HT_EEXIST (a non-socket file is at the Unix path),
 * HT_EADDRINUSE (the TCP port is taken), HT_EACCES (no permission: a
 * privileged port, a directory not writable, another user's socket file
 * in a sticky directory), HT_EIO (bind/listen failed otherwise, e.g. a
 * directory that does not exist), HT_ESHUTDOWN. */
HT_API int ht_messenger_listen(ht_messenger *m, const char *url, char *bound,
                               size_t bound_cap);

/* A handler gets every incoming request and one-way message of its
 * operation, on the loop thread. `msg` is valid during the call only. For
 * a request, `req` is the reply token: the handler (or anyone it gives it
 * to, on any thread) must call ht_request_reply or ht_request_drop exactly
 * once, now or later. For a one-way message `req` is NULL. */
typedef void (*ht_handler_fn)(void *arg, ht_request *req,
                              const ht_envelope *msg);

/* Registers fn for `operation` (copied), or as the default handler when
 * operation is NULL. fn NULL removes it. A request without a handler and
 * without a default gets an error reply with status HT_ENOHANDLER; such a
 * one-way is dropped (and logged at debug level). Errors: HT_EEXIST (a
 * handler is registered: remove it first), HT_ENOENT (removing nothing). */
HT_API int ht_messenger_handle(ht_messenger *m, const char *operation,
                               ht_handler_fn fn, void *arg);

/* --- peers: outgoing connections */

/* Creates a peer for url (copied) and starts connecting. The connection is
 * re-established after a loss, with exponential back-off between
 * reconnect_min_ms and reconnect_max_ms. The peer stays until
 * ht_peer_close or ht_messenger_close. Errors: HT_EADDR, HT_ENOMEM,
 * HT_ESHUTDOWN. */
HT_API int ht_messenger_connect(ht_messenger *m, const char *url,
                                ht_peer **out);

/* Closes a peer: its pending requests get HT_ECLOSED, queued payloads'
 * done gets HT_ECLOSED (on the loop thread, before this returns). The
 * handle is invalid afterwards. Sends racing with close from other
 * threads are the caller's bug. */
HT_API int ht_peer_close(ht_peer *peer);

/* The URL the peer was created with. Valid while the peer is. */
HT_API const char *ht_peer_url(const ht_peer *peer);

/* 1 when the peer's connection is established, else 0. */
HT_API int ht_peer_connected(const ht_peer *peer);

/* Bytes and messages accepted for the peer and not yet written. */
HT_API size_t ht_peer_queued_bytes(const ht_peer *peer);
HT_API size_t ht_peer_queued_msgs(const ht_peer *peer);

/* After a send failed with HT_EQUEUEFULL, fn(arg, peer) runs once on the
 * loop thread when the queue has drained below half of both bounds. One
 * callback per peer; fn NULL unregisters. */
typedef void (*ht_writable_fn)(void *arg, ht_peer *peer);
HT_API int ht_peer_on_writable(ht_peer *peer, ht_writable_fn fn, void *arg);

/* --- sending */

typedef void (*ht_done_fn)(void *arg, int status);

/* A payload to send; see "Payload ownership" above. */
typedef struct ht_payload {
  const void *data;
  size_t len;
  ht_done_fn done; /* NULL: copy; else borrow until done runs */
  void *done_arg;
} ht_payload;

/* The outcome of a request, exactly once per accepted request, on the
 * loop thread. status 0: `reply` is the peer's reply. HT_EPEERERROR:
 * `reply` is the peer's error envelope (reply->status says why, e.g.
 * HT_ENOHANDLER). Otherwise reply is NULL and status is HT_ETIMEDOUT,
 * HT_ECONNRESET (connection lost after the request was accepted),
 * HT_ENOTCONN (the connection attempt it waited for failed), HT_ECLOSED
 * (peer closed) or HT_ESHUTDOWN. `reply` is valid during the call only. */
typedef void (*ht_reply_fn)(void *arg, int status, const ht_envelope *reply);

/* Per-request options; NULL means all defaults. Grows like
 * ht_messenger_options: fill with ht_request_options_init first (it sets
 * `size`), then change fields. */
typedef struct ht_request_options {
  size_t size;         /* sizeof(ht_request_options) */
  uint32_t timeout_ms; /* 0: the messenger's request_timeout_ms */
} ht_request_options;

/* As ht_messenger_options_init: defaults in the caller's sizeof. */
HT_API int ht_request_options_init_sized(ht_request_options *ropts,
                                         size_t size);
#define ht_request_options_init(ropts)                                         \
  ht_request_options_init_sized((ropts), sizeof *(ropts))

/* Sends a request for `operation` (copied into the frame) with payload
 * (NULL: empty). fn(arg, ...) runs exactly once if this returns 0, never
 * if it returns an error. The timeout starts when the loop accepts the
 * request. Errors: HT_EINVAL (also ropts->size too small), HT_ENOMEM, HT_EQUEUEFULL (the peer's write
 * queue is full: nothing was queued), HT_ENOTCONN (the peer is waiting to
 * reconnect), HT_ESHUTDOWN, HT_EFRAMETOOBIG. */
HT_API int ht_peer_request(ht_peer *peer, const char *operation,
                           const ht_payload *payload,
                           const ht_request_options *ropts, ht_reply_fn fn,
                           void *arg);

/* Sends a one-way message. Same errors and payload rules as
 * ht_peer_request; payload->done (when set) reports the outcome. */
HT_API int ht_peer_send(ht_peer *peer, const char *operation,
                        const ht_payload *payload);

/* --- answering requests (any thread) */

/* Answers req and gives it up (req is invalid after the call, whatever it
 * returns). status 0 sends a reply; any other value sends an error
 * envelope carrying that status, and the requester sees HT_EPEERERROR.
 * Errors (payload not sent, done not called): HT_ECONNRESET (the
 * requester's connection is gone), HT_ESHUTDOWN (messenger closed),
 * HT_ENOMEM, HT_EINVAL. If the connection goes away after a 0 return, a
 * borrowed payload's done gets HT_ECONNRESET (or HT_ESHUTDOWN). Replies
 * never fail for a full queue: instead an accepted connection whose
 * replies back up (or with max_inflight unanswered requests) is not read
 * until they drain, so a client that does not read cannot grow memory. */
HT_API int ht_request_reply(ht_request *req, int32_t status,
                            const ht_payload *payload);

/* Gives req up without answering (the requester will time out). */
HT_API void ht_request_drop(ht_request *req);

/* Operation of the request (valid until reply/drop) and the requester's
 * address as a URL ("tcp://127.0.0.1:40000", "unix://" for an unnamed
 * Unix peer). */
HT_API const char *ht_request_operation(const ht_request *req);
HT_API const char *ht_request_peer(const ht_request *req);

/* --- keeping a received message */

/* Copies an envelope (operation and payload included) into one heap block
 * owned by the caller; free it with ht_message_free. Any thread. */
HT_API int ht_message_copy(const ht_envelope *msg, ht_envelope **out);
HT_API void ht_message_free(ht_envelope *copy);

#ifdef __cplusplus
}
#endif

#endif /* HOPTRACE_MESSENGER_H */
