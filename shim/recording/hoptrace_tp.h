/* LTTng-UST provider `hoptrace`: the event schema, and the contract
 * between libhoptrace and the `hoptrace` tool (which reads these field
 * names; change both together).
 *
 * Schema 2's span records (span, span_x, span_s, process, desc, peer) are
 * generated from hoptrace_schema.h, which documents them. The events
 * below (schema 1) each start with the same four id fields:
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
 *   (span_start_send/recv and span_end_send/recv, the traced messenger's
 *   folded events before schema 2, are no longer written; the tool still
 *   reads them.)
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

#include "recording/hoptrace_schema.h"
#include "recording/hoptrace_tp_types.h"

/* Schema 2 (hoptrace_schema.h): each event takes its ht_rec_* struct.
 * Declared first: the first events of a channel get the compact header. */
#define HOPTRACE_TP_X64(name) lttng_ust_field_integer_hex(uint64_t, name, r->name)
#define HOPTRACE_TP_U64(name) lttng_ust_field_integer(uint64_t, name, r->name)
#define HOPTRACE_TP_U32(name) lttng_ust_field_integer(uint32_t, name, r->name)
#define HOPTRACE_TP_U8(name) lttng_ust_field_integer(uint8_t, name, r->name)
#define HOPTRACE_TP_I32(name) lttng_ust_field_integer(int32_t, name, r->name)
#define HOPTRACE_TP_STR(name) lttng_ust_field_string(name, r->name)
#define HOPTRACE_TP_FIELD(type, name) HOPTRACE_TP_##type(name)
#define HOPTRACE_TP_EVENT(event, fields)                                        \
  LTTNG_UST_TRACEPOINT_EVENT(hoptrace, event,                                  \
    LTTNG_UST_TP_ARGS(const ht_rec_##event *, r),                              \
    LTTNG_UST_TP_FIELDS(fields(HOPTRACE_TP_FIELD)))

HT_SCHEMA_EVENTS(HOPTRACE_TP_EVENT)

/* Schema 1 events: still written by the span API, one-ways and the rare
 * paths of the traced messenger (errors, spans never finished). */

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

#endif /* HOPTRACE_TP_H */

#include <lttng/tracepoint-event.h>
