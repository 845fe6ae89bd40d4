/* LTTng-UST provider `hoptrace`: the event schema, and the contract
 * between libhoptrace and the `hoptrace` tool (which reads these field
 * names; change both together).
 *
 * Every event is generated from hoptrace_schema.h (schema 3), which
 * documents them, and schema 2's that the tool still reads. Schema 1's
 * events (span_start, span_end, annotation, kv_str, kv_int, kvs, status,
 * msg_*, hop_*, one per span API call) are no longer written either; the
 * tool still reads traces that hold them.
 * Timestamps are the tracer's. Must never: contain logic beyond the event
 * description (it is compiled into two objects: libhoptrace's call sites
 * and libhoptrace-tp.so's probes).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER hoptrace

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "hoptrace_tp.h"

#if !defined(HOPTRACE_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define HOPTRACE_TP_H

#include <stdint.h>

#include <lttng/tracepoint.h>

#include "hoptrace_schema.h"

/* Each event takes its ht_rec_* struct (hoptrace_schema.h). */
#define HOPTRACE_TP_X64(name) lttng_ust_field_integer_hex(uint64_t, name, r->name)
#define HOPTRACE_TP_U64(name) lttng_ust_field_integer(uint64_t, name, r->name)
#define HOPTRACE_TP_U32(name) lttng_ust_field_integer(uint32_t, name, r->name)
#define HOPTRACE_TP_U8(name) lttng_ust_field_integer(uint8_t, name, r->name)
#define HOPTRACE_TP_I32(name) lttng_ust_field_integer(int32_t, name, r->name)
#define HOPTRACE_TP_I64(name) lttng_ust_field_integer(int64_t, name, r->name)
#define HOPTRACE_TP_STR(name) lttng_ust_field_string(name, r->name)
#define HOPTRACE_TP_X64x4(name) lttng_ust_field_array_hex(uint64_t, name, r->name, 4)
#define HOPTRACE_TP_X64x5(name) lttng_ust_field_array_hex(uint64_t, name, r->name, 5)
#define HOPTRACE_TP_X64x7(name) lttng_ust_field_array_hex(uint64_t, name, r->name, 7)
#define HOPTRACE_TP_X64x12(name) lttng_ust_field_array_hex(uint64_t, name, r->name, 12)
#define HOPTRACE_TP_X64x13(name) lttng_ust_field_array_hex(uint64_t, name, r->name, 13)
#define HOPTRACE_TP_U64x4(name) lttng_ust_field_array(uint64_t, name, r->name, 4)
#define HOPTRACE_TP_U32x3(name) lttng_ust_field_array(uint32_t, name, r->name, 3)
#define HOPTRACE_TP_U32x4(name) lttng_ust_field_array(uint32_t, name, r->name, 4)
#define HOPTRACE_TP_FIELD(type, name) HOPTRACE_TP_##type(name)
#define HOPTRACE_TP_EVENT(event, fields)                                        \
  LTTNG_UST_TRACEPOINT_EVENT(hoptrace, event,                                  \
    LTTNG_UST_TP_ARGS(const ht_rec_##event *, r),                              \
    LTTNG_UST_TP_FIELDS(fields(HOPTRACE_TP_FIELD)))

HT_SCHEMA_EVENTS(HOPTRACE_TP_EVENT)

#endif /* HOPTRACE_TP_H */

#include <lttng/tracepoint-event.h>
