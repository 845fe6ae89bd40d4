/* Benchmark-only provider `htbench`: hop_raw has exactly the fields of
 * hoptrace:msg_send (four 64-bit ids, u8 type, u64 seq, u64 size, peer
 * string), called directly: the floor a hop event is compared with.
 * Must never: be used outside bench/. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER htbench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "htbench_tp.h"

#if !defined(HTBENCH_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define HTBENCH_TP_H

#include <stdint.h>

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(htbench, hop_raw,
  LTTNG_UST_TP_ARGS(uint64_t, hi, uint64_t, lo, uint64_t, span, uint64_t, parent,
                    uint8_t, type, uint64_t, seq, uint64_t, size,
                    const char *, peer),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer_hex(uint64_t, trace_id_hi, hi)
    lttng_ust_field_integer_hex(uint64_t, trace_id_lo, lo)
    lttng_ust_field_integer_hex(uint64_t, span_id, span)
    lttng_ust_field_integer_hex(uint64_t, parent_span_id, parent)
    lttng_ust_field_integer(uint8_t, type, type)
    lttng_ust_field_integer(uint64_t, seq, seq)
    lttng_ust_field_integer(uint64_t, size, size)
    lttng_ust_field_string(peer, peer)))

#endif /* HTBENCH_TP_H */

#include <lttng/tracepoint-event.h>
