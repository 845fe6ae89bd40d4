/* The event recorder propagate calls for sampled spans: each hook fires
 * the LTTng-UST tracepoint (a no-op until the provider is loaded and a
 * session enables it) and its USDT twin (a no-op until a tool sets the
 * semaphore). Compiled into libhoptrace, which does not link lttng-ust:
 * the tracepoint definitions use dynamic linkage.
 * Must never: allocate, block, or build arguments nobody will read.
 */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
/* Every call site is in this file: the tracepoint structures stay inside
 * libhoptrace (lttng-ust gives them default visibility otherwise). */
#define LTTNG_UST_TRACEPOINT_HIDDEN_DEFINITION
#include "recording/hoptrace_tp.h"

#include <string.h>

#include "propagate/events.h"
#include "recording/recorder.h"
#include "recording/usdt.h"

#define IDS(c) (c)->trace_id_hi, (c)->trace_id_lo, (c)->span_id, (c)->parent_span_id
/* Two steps so IDS() expands into four arguments before STAP_PROBEn
 * counts them. */
#define USDT(n, name, ...) USDT_(n, name, __VA_ARGS__)
#define USDT_(n, name, ...) STAP_PROBE##n(hoptrace, name, __VA_ARGS__)

static void on_span_start(const ht_trace_context *c, const ht_span_info *i) {
  lttng_ust_tracepoint(hoptrace, span_start, c, (uint8_t)i->kind, i->name,
                       i->service, i->endpoint);
  if (HT_USDT_ENABLED(span_start))
    USDT(9, span_start, IDS(c), c->flags, (int)i->kind, i->name,
                i->service, i->endpoint);
}

static void on_span_end(const ht_trace_context *c, int32_t status) {
  lttng_ust_tracepoint(hoptrace, span_end, c, status);
  if (HT_USDT_ENABLED(span_end))
    USDT(5, span_end, IDS(c), status);
}

static void on_annotate(const ht_trace_context *c, const char *name) {
  lttng_ust_tracepoint(hoptrace, annotation, c, name);
  if (HT_USDT_ENABLED(annotation))
    USDT(5, annotation, IDS(c), name);
}

static void on_kv_str(const ht_trace_context *c, const char *k, const char *v) {
  lttng_ust_tracepoint(hoptrace, kv_str, c, k, v);
  if (HT_USDT_ENABLED(kv_str))
    USDT(6, kv_str, IDS(c), k, v);
}

static void on_kv_int(const ht_trace_context *c, const char *k, int64_t v) {
  lttng_ust_tracepoint(hoptrace, kv_int, c, k, v);
  if (HT_USDT_ENABLED(kv_int))
    USDT(6, kv_int, IDS(c), k, v);
}

static void on_kvs(const ht_trace_context *c, const ht_kv *kvs, size_t n) {
  int lttng_on = lttng_ust_tracepoint_enabled(hoptrace, kvs);
  if (!lttng_on && !HT_USDT_ENABLED(kvs))
    return;
  char keys[HT_KVS_TEXT_MAX + 1], strs[HT_KVS_TEXT_MAX + 1];
  uint8_t types[HT_KVS_MAX];
  int64_t ints[HT_KVS_MAX];
  ht_tp_kvs v;
  ht_recorder_join_kvs(kvs, n, keys, strs, types, ints, &v);
  if (lttng_on)
    lttng_ust_do_tracepoint(hoptrace, kvs, c, &v);
  if (HT_USDT_ENABLED(kvs))
    USDT(9, kvs, IDS(c), (int)v.count, keys, types, ints, strs);
}

static void on_status(const ht_trace_context *c, int32_t code, const char *m) {
  lttng_ust_tracepoint(hoptrace, status, c, code, m);
  if (HT_USDT_ENABLED(status))
    USDT(6, status, IDS(c), code, m);
}

static void on_msg(const ht_trace_context *c, int dir, uint32_t type,
                   uint64_t seq, uint64_t size, const char *peer) {
  if (dir == 0) {
    lttng_ust_tracepoint(hoptrace, msg_send, c, (uint8_t)type, seq, size, peer);
    if (HT_USDT_ENABLED(msg_send))
      USDT(8, msg_send, IDS(c), type, seq, size, peer);
  } else {
    lttng_ust_tracepoint(hoptrace, msg_recv, c, (uint8_t)type, seq, size, peer);
    if (HT_USDT_ENABLED(msg_recv))
      USDT(8, msg_recv, IDS(c), type, seq, size, peer);
  }
}

static void on_hop(const ht_trace_context *c, int dir, const char *ann,
                   uint32_t type, uint64_t seq, uint64_t size,
                   const char *peer) {
  if (dir == 0) {
    lttng_ust_tracepoint(hoptrace, hop_send, c, ann, (uint8_t)type, seq, size,
                         peer);
    if (HT_USDT_ENABLED(hop_send))
      USDT(9, hop_send, IDS(c), ann, type, seq, size, peer);
  } else {
    lttng_ust_tracepoint(hoptrace, hop_recv, c, ann, (uint8_t)type, seq, size,
                         peer);
    if (HT_USDT_ENABLED(hop_recv))
      USDT(9, hop_recv, IDS(c), ann, type, seq, size, peer);
  }
}

/* The USDT twins of the folded events are the probes of their parts
 * (span_start/span_end and hop_send/hop_recv): a probe has at most 12
 * arguments, and USDT users see the same probes as before the fold. */
static void usdt_hop(const ht_trace_context *c, int dir, const char *ann,
                     uint32_t type, uint64_t seq, uint64_t size,
                     const char *peer) {
  if (dir == 0 && HT_USDT_ENABLED(hop_send))
    USDT(9, hop_send, IDS(c), ann, type, seq, size, peer);
  if (dir != 0 && HT_USDT_ENABLED(hop_recv))
    USDT(9, hop_recv, IDS(c), ann, type, seq, size, peer);
}

static void on_span_start_hop(const ht_trace_context *c, const ht_span_info *i,
                              int dir, const char *ann, uint32_t type,
                              uint64_t seq, uint64_t size, const char *peer) {
  if (dir == 0)
    lttng_ust_tracepoint(hoptrace, span_start_send, c, (uint8_t)i->kind,
                         i->name, i->service, i->endpoint, ann, (uint8_t)type,
                         seq, size, peer);
  else
    lttng_ust_tracepoint(hoptrace, span_start_recv, c, (uint8_t)i->kind,
                         i->name, i->service, i->endpoint, ann, (uint8_t)type,
                         seq, size, peer);
  if (HT_USDT_ENABLED(span_start))
    USDT(9, span_start, IDS(c), c->flags, (int)i->kind, i->name, i->service,
         i->endpoint);
  usdt_hop(c, dir, ann, type, seq, size, peer);
}

static void on_span_end_hop(const ht_trace_context *c, int32_t status, int dir,
                            const char *ann, uint32_t type, uint64_t seq,
                            uint64_t size, const char *peer) {
  if (dir == 0)
    lttng_ust_tracepoint(hoptrace, span_end_send, c, status, ann,
                         (uint8_t)type, seq, size, peer);
  else
    lttng_ust_tracepoint(hoptrace, span_end_recv, c, status, ann,
                         (uint8_t)type, seq, size, peer);
  usdt_hop(c, dir, ann, type, seq, size, peer);
  if (HT_USDT_ENABLED(span_end))
    USDT(5, span_end, IDS(c), status);
}

const ht_event_ops ht_recorder_ops = {
    .span_start = on_span_start,
    .span_end = on_span_end,
    .annotate = on_annotate,
    .kv_str = on_kv_str,
    .kv_int = on_kv_int,
    .kvs = on_kvs,
    .status = on_status,
    .msg = on_msg,
    .hop = on_hop,
    .span_start_hop = on_span_start_hop,
    .span_end_hop = on_span_end_hop,
};
