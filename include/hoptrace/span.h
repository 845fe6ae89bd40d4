/* Spans: the unit of work of a trace, and what each one records.
 *
 * An ht_span lives in caller-owned storage (stack, request struct): no
 * allocation, no lock, no I/O. Its `ctx` member holds the ids and flags to
 * propagate (read it, never write it); the other members are private.
 *
 * Every span records events only when its trace is sampled
 * (ctx.flags & HT_FLAG_SAMPLED); otherwise each call below returns after
 * one flag test, and the span still carries valid ids to propagate.
 * Events go to the LTTng-UST provider `hoptrace` and its USDT twins when
 * tracing is initialised (see tracing.h); they are timestamped by the
 * tracer. A span is recorded in one event when it finishes (its names,
 * start, status, its "cs", "sr", "ss", "cr" times and its first integer
 * key-value); other annotations, key-values, errors and messages are
 * recorded as they happen. A span
 * never finished (its process killed) is lost, with those events left
 * unattached to a recorded span.
 *
 * Strings passed to any function are only read during the call (copied
 * into the event). A span is used by one thread at a time; different spans
 * may be used concurrently. Calls on a finished span (or a zeroed one)
 * do nothing.
 */
#ifndef HOPTRACE_SPAN_H
#define HOPTRACE_SPAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hoptrace/api.h"
#include "hoptrace/context.h"
#include "hoptrace/msg_type.h"
#include "hoptrace/sampler.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ht_span_kind {
  HT_SPAN_INTERNAL = 0,
  HT_SPAN_CLIENT = 1,
  HT_SPAN_SERVER = 2,
  HT_SPAN_PRODUCER = 3,
  HT_SPAN_CONSUMER = 4
} ht_span_kind;

/* Short lower-case name of a kind ("client"), "unknown" when out of
 * range. Static string. */
HT_API const char *ht_span_kind_name(ht_span_kind kind);

/* What a span is. Any string may be NULL (recorded as ""). */
typedef struct ht_span_info {
  const char *name;     /* operation, e.g. "osd_write" */
  ht_span_kind kind;
  const char *service;  /* e.g. "osd.3" */
  /* This side's own address, e.g. "tcp://10.0.0.3:6800" for a server
   * span of the OSD listening there; "" when unknown. The other side's
   * address is the peer of ht_span_msg_send / ht_span_msg_recv. Zipkin
   * exports: localEndpoint and remoteEndpoint. */
  const char *endpoint;
} ht_span_info;

/* A copy of *info whose names the library looked up once: every
 * ht_span_start_* given *out skips the lookup (and the compare of the
 * text) that any other info takes. The library copies the strings (NULL
 * reads as ""); *out is the library's, immutable, valid until the process
 * ends, and the same for equal infos. HT_EINVAL for a NULL argument,
 * HT_ENAMESFULL when the library's names table or its region of interned
 * infos (4,096) is full, HT_ENOMEM. Thread-safe. */
HT_API int ht_span_info_intern(const ht_span_info *info, const ht_span_info **out);

/* A span records one event when it finishes (with the times of its
 * "cs", "sr", "ss", "cr" annotations), so it keeps what that event says
 * until then: the private members below. Private members may be added at
 * the end: `size` tells the library how much storage this caller's span
 * has (set by ht_span_init, before the first start). */
typedef struct ht_span {
  size_t size;          /* sizeof(ht_span), set by ht_span_init */
  ht_trace_context ctx; /* ids and flags to propagate (read-only) */
  uint32_t state_;      /* private */
  int32_t status_;      /* private */
  uint64_t start_;      /* private: the tracer's clock at the start */
  const void *desc_;    /* private: its names, interned */
  uint64_t marks_[4];   /* private: cs, sr, ss, cr times (0: none) */
  uint64_t prob_;       /* private: a root's sampling probability
                           (ht_sampler_root_probability), 0 otherwise */
  /* 2.1, private: the span's first integer key-value, written in its
   * finishing event (the key copied: the caller's may not outlive the
   * call) */
  int64_t kv_value_;
  char kv_key_[32];
} ht_span;

/* Prepares span storage: zeroed (every call on it does nothing) and its
 * size set to this caller's sizeof(ht_span). Once per storage, before
 * the first ht_span_start_*; a span may then be started again after it
 * finished. Inline: it costs two stores on the hot path, not a call. */
static inline void ht_span_init(ht_span *span) {
  memset(span, 0, sizeof(*span));
  span->size = sizeof(*span);
}

/* Standard Dapper/Zipkin annotation names. */
#define HT_ANN_CLIENT_SEND "cs"
#define HT_ANN_SERVER_RECV "sr"
#define HT_ANN_SERVER_SEND "ss"
#define HT_ANN_CLIENT_RECV "cr"

/* Every start needs a span prepared by ht_span_init: HT_EINVAL, and the
 * span untouched, for NULL or a size below 2.0's sizeof(ht_span) (a span
 * never prepared). A later library uses members it adds only when the
 * span's size covers them. On any other error the span is zeroed but
 * keeps its size (records nothing, may be started again). */

/* Starts a root span of a new trace; the active sampler decides, unless
 * hint overrides it (per-request). HT_EINVAL for NULL info. */
HT_API int ht_span_start_root(ht_span *span, const ht_span_info *info,
                              ht_sample_hint hint);

/* Starts a child of a local span (running or finished): same trace, same
 * decision. A parent that was never started (zero ids) gives
 * HT_EBADCONTEXT. */
HT_API int ht_span_start_child(ht_span *span, const ht_span *parent,
                               const ht_span_info *info);

/* Starts a child of a context captured in this process (e.g. the dispatch
 * context carried to a worker thread): same decision as the context
 * (ctx->flags; to override it for one request's subtree, pass a copy with
 * HT_FLAG_SAMPLED / HT_FLAG_DEBUG changed). HT_EBADCONTEXT when ctx is
 * invalid. */
HT_API int ht_span_start_local(ht_span *span, const ht_trace_context *ctx,
                               const ht_span_info *info);

/* Starts a child of a context received from a remote peer: the active
 * sampling configuration decides (remote-DEBUG policy included).
 * HT_EBADCONTEXT when ctx is invalid. */
HT_API int ht_span_start_remote(ht_span *span, const ht_trace_context *remote,
                                const ht_span_info *info);

/* 1 when the span records events: kept (HT_FLAG_SAMPLED) or recorded in
 * memory by the flight recorder (HT_FLAG_RECORDED). */
static inline int ht_span_is_sampled(const ht_span *span) {
  return (span->ctx.flags & (HT_FLAG_SAMPLED | HT_FLAG_RECORDED)) != 0;
}

/* A timestamped annotation: "cs", "sr", "ss", "cr" (kept in the span for
 * its finishing event; one given twice is recorded like any other name)
 * or any name (an event of its own). A client span's "cs" and "cr" are
 * its start and end, a server span's "sr" and "ss" too: they take those
 * times (Dapper's model; no clock read), not the time of the call. */
HT_API void ht_span_annotate(ht_span *span, const char *name);

/* Key-value annotations. A span's first integer key-value whose key is
 * shorter than 32 bytes is kept in the span and recorded in its finishing
 * event; the others are recorded at once. */
HT_API void ht_span_kv_str(ht_span *span, const char *key, const char *value);
HT_API void ht_span_kv_int(ht_span *span, const char *key, int64_t value);

typedef enum ht_kv_type { HT_KV_STR = 0, HT_KV_INT = 1 } ht_kv_type;
typedef struct ht_kv {
  const char *key;
  ht_kv_type type;
  const char *str; /* HT_KV_STR */
  int64_t i64;     /* HT_KV_INT */
} ht_kv;

/* Up to HT_KVS_MAX key-values at once (the rest are dropped and a kv
 * "ht.kvs_dropped" records how many), each an event as from
 * ht_span_kv_str / ht_span_kv_int. The USDT probe `kvs` gets them in one
 * call: keys and string values joined with the unit separator 0x1f (0x1f
 * inside a key or value replaced by '?'), text longer than
 * HT_KVS_TEXT_MAX bytes truncated. */
#define HT_KVS_MAX 16
#define HT_KVS_TEXT_MAX 1024
HT_API void ht_span_kvs(ht_span *span, const ht_kv *kvs, size_t n);

/* Error/status: a non-zero code (an HT_E* value, an errno, or an
 * application status) and a message. Recorded at once (code, message);
 * the last code is also recorded when the span ends. */
HT_API void ht_span_set_error(ht_span *span, int32_t code, const char *message);

/* Message hops. type is the envelope type (msg_type.h), seq its
 * correlation number, peer an address. */
HT_API void ht_span_msg_send(ht_span *span, ht_msg_type type, uint64_t seq,
                             uint64_t size, const char *peer);
HT_API void ht_span_msg_recv(ht_span *span, ht_msg_type type, uint64_t seq,
                             uint64_t size, const char *peer);

/* Ends the span: records it in one event, with the last status.
 * Idempotent. */
HT_API void ht_span_finish(ht_span *span);

#ifdef __cplusplus
}
#endif

#endif /* HOPTRACE_SPAN_H */
