/* The event interface between propagate (pure logic) and whatever records
 * events (shim/: LTTng-UST + USDT). Propagate calls these only for sampled
 * spans; it never knows what is behind them.
 *
 * Must never: allocate, block, or call back into propagate.
 */
#ifndef HT_PROPAGATE_EVENTS_H
#define HT_PROPAGATE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "hoptrace/context.h"
#include "hoptrace/span.h"

/* Every hook gets the span's context; strings are never NULL (propagate
 * substitutes ""). Hooks run on the thread that called the span function. */
typedef struct ht_event_ops {
  void (*span_start)(const ht_trace_context *ctx, const ht_span_info *info);
  void (*span_end)(const ht_trace_context *ctx, int32_t status);
  void (*annotate)(const ht_trace_context *ctx, const char *name);
  void (*kv_str)(const ht_trace_context *ctx, const char *key,
                 const char *value);
  void (*kv_int)(const ht_trace_context *ctx, const char *key, int64_t v);
  /* n <= HT_KVS_MAX */
  void (*kvs)(const ht_trace_context *ctx, const ht_kv *kvs, size_t n);
  void (*status)(const ht_trace_context *ctx, int32_t code,
                 const char *message);
  /* dir: 0 send, 1 receive */
  void (*msg)(const ht_trace_context *ctx, int dir, uint32_t type,
              uint64_t seq, uint64_t size, const char *peer);
  /* A message hop and its annotation ("cs", "sr", "ss", "cr") in one
   * event: what annotate + msg record, for half the cost. */
  void (*hop)(const ht_trace_context *ctx, int dir, const char *annotation,
              uint32_t type, uint64_t seq, uint64_t size, const char *peer);
  /* A span's start (or end) and its first (or last) hop in one event:
   * what span_start (span_end) + hop record. */
  void (*span_start_hop)(const ht_trace_context *ctx, const ht_span_info *info,
                         int dir, const char *annotation, uint32_t type,
                         uint64_t seq, uint64_t size, const char *peer);
  void (*span_end_hop)(const ht_trace_context *ctx, int32_t status, int dir,
                       const char *annotation, uint32_t type, uint64_t seq,
                       uint64_t size, const char *peer);
} ht_event_ops;

/* Installs the recorder (NULL: record nothing). ops must stay valid for
 * the rest of the process (a static table): a span may still be calling
 * the previous table. Every hook must be non-NULL. */
void ht_events_install(const ht_event_ops *ops);

/* The installed table, or NULL. */
const ht_event_ops *ht_events_current(void);

#endif /* HT_PROPAGATE_EVENTS_H */
