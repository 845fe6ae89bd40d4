/* Interceptor table of the transport: the seam the traced messenger
 * (shim/messenger/) plugs into. A hook table is fixed when the messenger is
 * built and never changes; a plain messenger has none. When each hook fires
 * is decided in one place, fire.h (one ht_fire_* helper a hook, each call
 * site one line): a plain messenger pays one predictable branch a site.
 *
 * Never: call back into the messenger from a hook (no sends, no close), or
 * block. Hooks see envelopes whose pointers are valid for the call only.
 *
 * Every member may be NULL. `arg` is the hooks_arg given at construction.
 */
#ifndef HT_TRANSPORT_HOOKS_H
#define HT_TRANSPORT_HOOKS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hoptrace/messenger.h"
#include "hoptrace/wire.h"

typedef enum ht_hook_dir { HT_HOOK_SEND = 0, HT_HOOK_RECV = 1 } ht_hook_dir;

/* Where an incoming request or one-way comes from (before_dispatch,
 * on_notice): the connection's, which the transport keeps with it, so
 * that the messages a hook records nothing for pay one store for it. The
 * states are the hooks' own (conn_init, handler_init), opaque here. */
typedef struct ht_hook_origin {
  const char *peer; /* the connection's name */
  void *conn;       /* what conn_init returned for the connection */
  void *handler;    /* what handler_init returned for the message's
                       handler; NULL without one, and for a notice */
} ht_hook_origin;

/* Where an outgoing request or one-way goes (before_encode): the peer's
 * URL (valid for the call) and a number no other peer of the process has
 * had, so that what a hook keeps for a peer is found again by the number
 * alone (the URL's memory may hold another peer's once this one is
 * freed; the number never names another). */
typedef struct ht_hook_peer {
  const char *url;
  uint64_t serial;
} ht_hook_peer;

typedef struct ht_transport_hooks {
  /* Each message passes as few hooks as its life allows (each call costs
   * every message, sampled or not): a request or one-way sent passes
   * before_encode, and on_message(SEND) when before_encode left a slot; a
   * received one passes before_dispatch (with its frame length) and
   * after_dispatch; its reply is stamped by the transport and ends in
   * request_done (with the reply's frame length) when the request has a
   * dispatch slot; the received reply reaches on_reply (with its length)
   * when the request has a slot or failed. A message the hooks keep no
   * slot for (an unsampled one, say) costs two calls a side: the later
   * ones would only count it, and with count_frames the transport counts.
   * on_message(RECV) sees only frames no other hook sees. */

  /* The sending thread (any thread), before env is encoded: every
   * outgoing request or one-way the application asks for (not a reply:
   * see before_dispatch), also one the transport then refuses at once
   * (HT_ENOTCONN, HT_ECLOSED, HT_EQUEUEFULL, ...; only HT_ESHUTDOWN, a
   * closing messenger, comes before it). The hook may set env->has_trace
   * and env->trace (nothing else). `slot` is the message's user slot: it
   * starts NULL and whatever the hook stores comes back in
   * on_message(SEND) once the frame is encoded and accepted, and in
   * on_reply when the call fails (at once, on this thread, or later) or,
   * for a request, is answered; a one-way's slot is forgotten after
   * on_message(SEND). Left NULL, the message passes no on_message(SEND),
   * nor on_reply unless it is a request that fails. */
  void (*before_encode)(void *arg, ht_envelope *env, const ht_hook_peer *to,
                        void **slot);

  /* Loop thread: an incoming request or one-way of frame_len bytes
   * (prefix included), from `from` (valid for the call), is about to reach
   * its handler (or the HT_ENOHANDLER path). *dispatch_slot starts NULL; for a request it
   * travels with the ht_request until request_done. *reply_trace starts
   * NULL: pointed at a context (valid while the request is open), the
   * transport stamps the request's reply or error with it (and
   * ht_transport_request_trace returns it). A request whose hook set
   * *dispatch_slot to NULL passes no request_done. */
  void (*before_dispatch)(void *arg, const ht_envelope *env,
                          const ht_hook_origin *from, size_t frame_len,
                          void **dispatch_slot,
                          const ht_trace_context **reply_trace);

  /* Loop thread: the handler returned. For a one-way, oneway_slot is its
   * dispatch slot (last sight of it). For a request it is NULL: the
   * request may be answered already, or later on another thread, and its
   * slot belongs to request_done. */
  void (*after_dispatch)(void *arg, const ht_envelope *env,
                         void *oneway_slot);

  /* The thread that answers, for a request with a dispatch slot: the
   * ht_request ends. frame_len > 0: a reply
   * (status 0) or error (status > 0) of that many bytes was just encoded
   * and goes out. frame_len 0: none was sent: status is a negative local
   * code (HT_ECONNRESET, HT_ESHUTDOWN, HT_ENOMEM), or 1 when the request
   * was dropped unanswered. Last sight of dispatch_slot. */
  void (*request_done)(void *arg, void *dispatch_slot, int status,
                       size_t frame_len);

  /* Loop thread: a request's outcome, just before its reply callback
   * (same status/reply as the callback; reply_len: the reply's frame
   * length, 0 without one), when it has a slot or failed (status != 0).
   * Last sight of the request slot.
   * Also runs (on the sending thread, no user callback follows) when the
   * send call fails after before_encode (a request, or a one-way the hooks
   * keep a slot for; reply NULL), so a slot does not leak; except
   * for HT_ESHUTDOWN from a send racing the messenger's final close,
   * where the table may already be destroyed (destroy must then free
   * whatever slots it still tracks). */
  void (*on_reply)(void *arg, int status, const ht_envelope *reply,
                   size_t reply_len, void *slot);

  /* A message event: SEND of a request or one-way that before_encode left
   * a slot for, on the sending thread right after encoding (env is what
   * went on the wire, frame_len includes the prefix; slot as before_encode
   * left it); RECV on the loop thread right after decoding, of a frame
   * that reaches no other hook (a reply matching no pending request, a
   * message of unknown type; slot NULL). */
  void (*on_message)(void *arg, ht_hook_dir dir, const ht_envelope *env,
                     size_t frame_len, const char *peer, void *slot);

  /* The thread that answers, for a request with a dispatch slot, before
   * its reply or error (status as ht_request_reply's) is encoded: the
   * hook may still change the context *reply_trace points at (the
   * reply's flags, say). Not for a request dropped unanswered. */
  void (*before_reply)(void *arg, void *dispatch_slot, int32_t status);
  /* NULL: before_reply as above. Else it is called only while this word
   * is nonzero (read once a reply, relaxed): a layer whose before_reply
   * has something to do only sometimes (a capture trigger set, or a reply
   * to flag, say) spares every other reply the call. */
  const atomic_uint *before_reply_gate;

  /* Loop thread: a notice (a one-way of operation HT_NOTICE_OP, sent by
   * ht_transport_notice) arrived from `from`. No handler sees it; a plain
   * messenger drops it. Untrusted like any frame. */
  void (*on_notice)(void *arg, const ht_envelope *env, const ht_hook_origin *from);

  /* Lifecycle: state the hooks keep with each connection and handler
   * (what a name or a peer was looked up as, say: a traced layer then
   * looks each up once, not once a message), theirs to allocate and free.
   * conn_init: loop thread, when the transport makes a connection (an
   * accepted one, or an outgoing peer's attempt before it connects).
   * handler_init: loop thread, when ht_messenger_handle registers a
   * handler (op NULL: the default handler). What init returns comes back
   * in ht_hook_origin; NULL keeps nothing. A non-NULL state reaches its
   * fini exactly once: conn_fini on the loop thread when the connection
   * is closed (also one that never connected or was refused at once);
   * handler_fini when the handler is unregistered (loop thread) or the
   * messenger freed (the closing thread); both always before destroy. */
  void *(*conn_init)(void *arg);
  void (*conn_fini)(void *arg, void *conn_state);
  void *(*handler_init)(void *arg, const char *op);
  void (*handler_fini)(void *arg, void *handler_state);

  /* Called once from ht_messenger_close after the loop stopped, and on a
   * failed construction. */
  void (*destroy)(void *arg);

  /* Bytes of storage the transport keeps for each dispatch slot, so a
   * traced layer needs no allocation per message. 0: none, and
   * *dispatch_slot starts NULL. Else (at most HT_HOOK_SLOT_MAX)
   * *dispatch_slot starts pointing at that many uninitialised bytes,
   * aligned for any type, owned by the transport (inside the ht_request,
   * or on the loop's stack for a one-way) and valid until request_done
   * (request) or after_dispatch (one-way) returns. The hook may replace
   * the pointer (NULL, or memory of its own it frees itself). */
  size_t dispatch_slot_size;

  /* true: the transport counts every frame it sends and every frame it
   * decodes, with its length, in the process counters HT_CTR_MSGS_SENT,
   * HT_CTR_BYTES_SENT, HT_CTR_MSGS_RECEIVED and HT_CTR_BYTES_RECEIVED
   * (src/common/counters.h; the traced messenger's statistics), so that
   * no hook is called only to count. A frame sent counts once it is
   * encoded and accepted (size and budget checks passed); a reply once it
   * is encoded. */
  bool count_frames;
} ht_transport_hooks;

#define HT_HOOK_SLOT_MAX 320u

/* The operation of the transport's notices: reserved (a handler
 * registered for it never runs). */
#define HT_NOTICE_OP "hoptrace.notice"

/* Sends a notice: a one-way of operation HT_NOTICE_OP carrying ctx
 * (copied) and `value` (in the envelope's status), to the outgoing peer of
 * m whose URL is peer_url, over its connection, past no hook. Any thread,
 * also from inside a hook (it calls none, and never blocks: from another
 * thread the send is queued to the loop). HT_ENOENT when no peer has that
 * URL, HT_ENOTCONN / HT_EQUEUEFULL as a send; from another thread 0 once
 * queued (the outcome is then not known to the caller). Each call counts
 * its notice once, when its outcome is known (on the loop for a queued
 * one): HT_CTR_NOTICES_SENT when the frame was accepted for sending (as
 * count_frames counts a frame), else HT_CTR_NOTICES_DROPPED. */
int ht_transport_notice(ht_messenger *m, const char *peer_url,
                        const ht_trace_context *ctx, int32_t value);

/* Builds a messenger with the hook table `hooks` (copied; NULL: plain) and
 * its argument. On failure hooks->destroy(hooks_arg) has been called.
 * opts->flavour is ignored here: this is what a flavour factory calls. */
int ht_transport_messenger_new(ht_messenger **out,
                               const ht_messenger_options *opts,
                               const ht_transport_hooks *hooks,
                               void *hooks_arg);

/* The dispatch slot of an open request (what before_dispatch stored).
 * Any thread, while req is open. */
void *ht_transport_request_slot(const ht_request *req);

/* The context an open request's reply will carry (what before_dispatch
 * named in *reply_trace), NULL when none: so a traced layer can capture
 * the server span when a handler hands the request to a worker thread.
 * Any thread, while req is open. */
const ht_trace_context *ht_transport_request_trace(const ht_request *req);

#endif /* HT_TRANSPORT_HOOKS_H */
