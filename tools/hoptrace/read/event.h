/* One hoptrace event as the tool sees it, decoded from CTF by
 * bt_decode.c. Names follow the provider header src/provider/hoptrace_tp.h, the
 * contract with the library. Strings are borrowed: valid only during the
 * callback that receives the event. */
#ifndef HT_TOOL_EVENT_H
#define HT_TOOL_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum hop_event_kind {
  HOP_SPAN_START,
  HOP_SPAN_END,
  HOP_ANNOTATION,
  HOP_KV_STR,
  HOP_KV_INT,
  HOP_KVS,
  HOP_STATUS,
  HOP_MSG_SEND,
  HOP_MSG_RECV,
  HOP_HOP_SEND, /* msg_send + the annotation in `name` ("cs", "ss") */
  HOP_HOP_RECV, /* msg_recv + the annotation in `name` ("sr", "cr") */
  /* A span's start (end) and its first (last) hop: span_start (span_end)
   * + the annotation in `annotation` + msg_send / msg_recv. */
  HOP_SPAN_START_SEND,
  HOP_SPAN_START_RECV,
  HOP_SPAN_END_SEND,
  HOP_SPAN_END_RECV,
  /* Schema 2: a whole span side, from start_ns to ts_ns, with the frame
   * annotations of its ends in `annotation` and `end_annotation` ("" when
   * that end was no frame). */
  HOP_SPAN_SIDE,
  /* Schema 2: a span API span's names, written at its start when they
   * could not be interned (its span side then comes with named_apart). */
  HOP_SPAN_NAMES,
  /* Schema 2's tables, consumed by names.h before anyone else sees them:
   * a process (procname, schema version in seq), desc_id -> span_kind,
   * name, service, endpoint, and peer_id -> peer. */
  HOP_PROCESS,
  HOP_DESC,
  HOP_PEER,
  /* A flight-recorder trigger for the trace (span_id: the span that fired,
   * 0 by hand): capture_why (HT_CAPTURE_*), capture_hops, threshold and
   * value (capture_threshold, capture_value), the service that fired in
   * `service`, the process in vpid. */
  HOP_CAPTURE,
  /* An event of the trace (trace_hi, trace_lo; span_id and parent_id when
   * read) the decoder dropped as malformed: not a span, but the trace has
   * lost a part and is marked incomplete. ts_ns 0 when it has no time
   * (none, or one past int64 ns): merged at once. */
  HOP_MALFORMED,
} hop_event_kind;

/* capture_why: hoptrace_schema.h's HT_CAPTURE_* */
enum { HOP_CAPTURE_SLOW_CLIENT = 1, HOP_CAPTURE_ERROR, HOP_CAPTURE_SLOW_SERVER,
       HOP_CAPTURE_MANUAL, HOP_CAPTURE_NOTICE, HOP_CAPTURE_WHY_MAX };

/* Span kinds as the provider writes them. */
enum { HOP_KIND_INTERNAL, HOP_KIND_CLIENT, HOP_KIND_SERVER, HOP_KIND_PRODUCER,
       HOP_KIND_CONSUMER };

typedef struct hop_kv {
  const char *key;
  bool is_int;
  int64_t int_value;
  const char *str_value;
} hop_kv;

typedef struct hop_event {
  hop_event_kind kind;
  int64_t ts_ns; /* nanoseconds since the Unix epoch */
  /* a span side written after it ended (span_r, at its trace's capture):
   * its end; the event's time (ts_ns) keeps the stream's order. 0: the
   * side ended at ts_ns. */
  int64_t end_ns;
  uint64_t trace_hi, trace_lo, span_id, parent_id;
  /* context fields; -1 / "" when the session did not record them */
  int64_t vpid, vtid;
  const char *procname;
  const char *hostname;
  /* span_start */
  uint32_t flags;
  int span_kind;
  const char *name; /* span_start name, annotation name (also hop_*) */
  const char *service, *endpoint;
  /* span_end status, status code */
  int32_t status;
  const char *message; /* status */
  /* kv_str, kv_int; a span side's one integer key-value (span_k), key
   * NULL: none */
  const char *key;
  const char *str_value;
  int64_t int_value;
  /* kvs */
  const hop_kv *kvs;
  size_t n_kvs;
  /* span_start_send/recv, span_end_send/recv: the hop's annotation */
  const char *annotation;
  /* span side: its start, and its end's annotation */
  int64_t start_ns;
  const char *end_annotation;
  uint8_t frames; /* 1: the start was a frame, 2: the end was */
  /* a root's sampling probability * 2^32 (hoptrace_schema.h ROOT_P), 0:
   * unknown or not a root; as recorded, possibly impossible (above 2^32;
   * UINT64_MAX: p = 0 recorded): model.h's trace_root_prob says */
  uint64_t root_prob;
  /* a span API span side: its "cs", "sr", "ss", "cr" times (0: none), and
   * whether its names came apart (HOP_SPAN_NAMES) rather than by desc_id */
  int64_t marks_ns[4];
  bool named_apart;
  uint32_t desc_id, peer_id; /* schema 2's ids, until names.h resolves them */
  /* msg_send, msg_recv, hop_send, hop_recv, span_start_*, span_end_* */
  int msg_type;
  uint64_t seq, size;
  const char *peer;
  /* capture */
  uint8_t capture_why, capture_hops;
  uint64_t capture_threshold, capture_value;
} hop_event;

/* LTTng lost events (ring buffer full) or whole packets of one stream,
 * between two times (0 when unknown), on the host that recorded them
 * ("" when unknown). Borrowed like an event. */
typedef struct hop_loss {
  const char *hostname;
  uint64_t events; /* 0: unknown (a lost packet's events are never known) */
  uint64_t packets;
  int64_t begin_ns, end_ns;
} hop_loss;

#endif
