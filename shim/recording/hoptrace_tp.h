/* LTTng-UST provider `hoptrace`: the event schema, and the contract
 * between libhoptrace and the `hoptrace` tool (which reads these field
 * names; change both together).
 *
 * Every event starts with the same four id fields:
 *   trace_id_hi, trace_id_lo  128-bit trace id (hi = 0 for 64-bit ids)
 *   span_id                   the span the event belongs to (never 0)
 *   parent_span_id            its parent span, 0 for a root
 * Events (name: extra fields):
 *   span_start:  flags (HT_FLAG_*), kind (0 internal, 1 client, 2 server,
 *                3 producer, 4 consumer), name, service, endpoint
 *   span_end:    status (0 = ok, else the last error code)
 *   annotation:  name ("cs", "sr", "ss", "cr" or a user name)
 *   kv_str:      key, value (strings)
 *   kv_int:      key, value (int64)
 *   kvs:         count; keys (text, count keys joined by 0x1f);
 *                types (count x uint8: 0 string, 1 int64);
 *                ints (count x int64, 0 for string entries);
 *                strs (text, count string values joined by 0x1f, ""
 *                for int entries)
 *   status:      code (int32), message
 *   msg_send, msg_recv: type (envelope type), seq, size (bytes), peer
 *   hop_send, hop_recv: name (the Dapper annotation: "cs"/"ss" on send,
 *                "sr"/"cr" on receive, never empty), type, seq, size, peer:
 *                one event for what an annotation plus a msg_send/msg_recv
 *                record, at the moment the frame was encoded / decoded.
 *                A reader treats one as the annotation and the message
 *                event together.
 *   span_start_send, span_start_recv: the span_start fields (flags,
 *                kind, name, service, endpoint), then annotation, type,
 *                seq, size, peer: a span_start and the span's first hop
 *                (hop_send / hop_recv) in one event, at the hop's time.
 *   span_end_send, span_end_recv: status, then annotation, type, seq,
 *                size, peer: the span's last hop and its span_end.
 *                The traced messenger writes a sampled request and its
 *                reply as 4 events: span_start_send (client, "cs"),
 *                span_start_recv (server, "sr"), span_end_send (server,
 *                "ss"), span_end_recv (client, "cr"); 12 before any
 *                folding. One-ways, failed sends and spans of the span
 *                API use the separate events.
 * Timestamps are the tracer's. Must never: contain logic beyond the event
 * description (it is compiled into two objects: libhoptrace's call sites
 * and libhoptrace-tp.so's probes).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER hoptrace

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "recording/hoptrace_tp.h"

#if !defined(HOPTRACE_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define HOPTRACE_TP_H

#include <stdint.h>

#include <lttng/tracepoint.h>

#include "hoptrace/context.h"

#include "recording/hoptrace_tp_types.h"

#define HOPTRACE_TP_ID_FIELDS(c)                                               \
  lttng_ust_field_integer_hex(uint64_t, trace_id_hi, (c)->trace_id_hi)          \
  lttng_ust_field_integer_hex(uint64_t, trace_id_lo, (c)->trace_id_lo)          \
  lttng_ust_field_integer_hex(uint64_t, span_id, (c)->span_id)                  \
  lttng_ust_field_integer_hex(uint64_t, parent_span_id, (c)->parent_span_id)

LTTNG_UST_TRACEPOINT_EVENT(hoptrace, span_start,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, uint8_t, kind,
                    const char *, name, const char *, service,
                    const char *, endpoint),
  LTTNG_UST_TP_FIELDS(
    HOPTRACE_TP_ID_FIELDS(c)
    lttng_ust_field_integer(uint8_t, flags, (uint8_t)(c)->flags)
    lttng_ust_field_integer(uint8_t, kind, kind)
    lttng_ust_field_string(name, name)
    lttng_ust_field_string(service, service)
    lttng_ust_field_string(endpoint, endpoint)))

LTTNG_UST_TRACEPOINT_EVENT(hoptrace, span_end,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, int32_t, status),
  LTTNG_UST_TP_FIELDS(
    HOPTRACE_TP_ID_FIELDS(c)
    lttng_ust_field_integer(int32_t, status, status)))

LTTNG_UST_TRACEPOINT_EVENT(hoptrace, annotation,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, const char *, name),
  LTTNG_UST_TP_FIELDS(
    HOPTRACE_TP_ID_FIELDS(c)
    lttng_ust_field_string(name, name)))

LTTNG_UST_TRACEPOINT_EVENT(hoptrace, kv_str,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, const char *, key,
                    const char *, value),
  LTTNG_UST_TP_FIELDS(
    HOPTRACE_TP_ID_FIELDS(c)
    lttng_ust_field_string(key, key)
    lttng_ust_field_string(value, value)))

LTTNG_UST_TRACEPOINT_EVENT(hoptrace, kv_int,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, const char *, key,
                    int64_t, value),
  LTTNG_UST_TP_FIELDS(
    HOPTRACE_TP_ID_FIELDS(c)
    lttng_ust_field_string(key, key)
    lttng_ust_field_integer(int64_t, value, value)))

LTTNG_UST_TRACEPOINT_EVENT(hoptrace, kvs,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, const ht_tp_kvs *, v),
  LTTNG_UST_TP_FIELDS(
    HOPTRACE_TP_ID_FIELDS(c)
    lttng_ust_field_integer(uint16_t, count, v->count)
    lttng_ust_field_sequence_text(char, keys, v->keys, uint16_t, v->keys_len)
    lttng_ust_field_sequence(uint8_t, types, v->types, uint16_t, v->count)
    lttng_ust_field_sequence(int64_t, ints, v->ints, uint16_t, v->count)
    lttng_ust_field_sequence_text(char, strs, v->strs, uint16_t, v->strs_len)))

LTTNG_UST_TRACEPOINT_EVENT(hoptrace, status,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, int32_t, code,
                    const char *, message),
  LTTNG_UST_TP_FIELDS(
    HOPTRACE_TP_ID_FIELDS(c)
    lttng_ust_field_integer(int32_t, code, code)
    lttng_ust_field_string(message, message)))

LTTNG_UST_TRACEPOINT_EVENT_CLASS(hoptrace, msg,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, uint8_t, type, uint64_t, seq,
                    uint64_t, size, const char *, peer),
  LTTNG_UST_TP_FIELDS(
    HOPTRACE_TP_ID_FIELDS(c)
    lttng_ust_field_integer(uint8_t, type, type)
    lttng_ust_field_integer(uint64_t, seq, seq)
    lttng_ust_field_integer(uint64_t, size, size)
    lttng_ust_field_string(peer, peer)))

LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(hoptrace, msg, hoptrace, msg_send,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, uint8_t, type, uint64_t, seq,
                    uint64_t, size, const char *, peer))

LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(hoptrace, msg, hoptrace, msg_recv,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, uint8_t, type, uint64_t, seq,
                    uint64_t, size, const char *, peer))

LTTNG_UST_TRACEPOINT_EVENT_CLASS(hoptrace, hop,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, const char *, name,
                    uint8_t, type, uint64_t, seq, uint64_t, size,
                    const char *, peer),
  LTTNG_UST_TP_FIELDS(
    HOPTRACE_TP_ID_FIELDS(c)
    lttng_ust_field_string(name, name)
    lttng_ust_field_integer(uint8_t, type, type)
    lttng_ust_field_integer(uint64_t, seq, seq)
    lttng_ust_field_integer(uint64_t, size, size)
    lttng_ust_field_string(peer, peer)))

LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(hoptrace, hop, hoptrace, hop_send,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, const char *, name,
                    uint8_t, type, uint64_t, seq, uint64_t, size,
                    const char *, peer))

LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(hoptrace, hop, hoptrace, hop_recv,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, const char *, name,
                    uint8_t, type, uint64_t, seq, uint64_t, size,
                    const char *, peer))

LTTNG_UST_TRACEPOINT_EVENT_CLASS(hoptrace, span_start_hop,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, uint8_t, kind,
                    const char *, name, const char *, service,
                    const char *, endpoint, const char *, annotation,
                    uint8_t, type, uint64_t, seq, uint64_t, size,
                    const char *, peer),
  LTTNG_UST_TP_FIELDS(
    HOPTRACE_TP_ID_FIELDS(c)
    lttng_ust_field_integer(uint8_t, flags, (uint8_t)(c)->flags)
    lttng_ust_field_integer(uint8_t, kind, kind)
    lttng_ust_field_string(name, name)
    lttng_ust_field_string(service, service)
    lttng_ust_field_string(endpoint, endpoint)
    lttng_ust_field_string(annotation, annotation)
    lttng_ust_field_integer(uint8_t, type, type)
    lttng_ust_field_integer(uint64_t, seq, seq)
    lttng_ust_field_integer(uint64_t, size, size)
    lttng_ust_field_string(peer, peer)))

LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(hoptrace, span_start_hop, hoptrace,
  span_start_send,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, uint8_t, kind,
                    const char *, name, const char *, service,
                    const char *, endpoint, const char *, annotation,
                    uint8_t, type, uint64_t, seq, uint64_t, size,
                    const char *, peer))

LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(hoptrace, span_start_hop, hoptrace,
  span_start_recv,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, uint8_t, kind,
                    const char *, name, const char *, service,
                    const char *, endpoint, const char *, annotation,
                    uint8_t, type, uint64_t, seq, uint64_t, size,
                    const char *, peer))

LTTNG_UST_TRACEPOINT_EVENT_CLASS(hoptrace, span_end_hop,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, int32_t, status,
                    const char *, annotation, uint8_t, type, uint64_t, seq,
                    uint64_t, size, const char *, peer),
  LTTNG_UST_TP_FIELDS(
    HOPTRACE_TP_ID_FIELDS(c)
    lttng_ust_field_integer(int32_t, status, status)
    lttng_ust_field_string(annotation, annotation)
    lttng_ust_field_integer(uint8_t, type, type)
    lttng_ust_field_integer(uint64_t, seq, seq)
    lttng_ust_field_integer(uint64_t, size, size)
    lttng_ust_field_string(peer, peer)))

LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(hoptrace, span_end_hop, hoptrace,
  span_end_send,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, int32_t, status,
                    const char *, annotation, uint8_t, type, uint64_t, seq,
                    uint64_t, size, const char *, peer))

LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(hoptrace, span_end_hop, hoptrace,
  span_end_recv,
  LTTNG_UST_TP_ARGS(const ht_trace_context *, c, int32_t, status,
                    const char *, annotation, uint8_t, type, uint64_t, seq,
                    uint64_t, size, const char *, peer))

#endif /* HOPTRACE_TP_H */

#include <lttng/tracepoint-event.h>
