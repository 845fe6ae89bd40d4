/* What application code adds to traced spans (hoptrace/traced.h): key-
 * values and annotations on a request's server span, on the thread's
 * current span, and on the next call's client span. Each is an event at
 * once (tag_s, tag_i, note), with the span's ids, before the span's own;
 * but a server span's first integer one, which its own event carries
 * (span_k).
 * Must never: record anything for an unsampled span, block, allocate, or
 * keep a caller's pointer past the call. */
#include <string.h>

#include "hoptrace/error.h"
#include "hoptrace/traced.h"
#include "hoptrace_schema.h"
#include "common/counters.h"
#include "messenger/traced_internal.h"
#include "messenger/traced_state.h"
#include "propagate/span_path.h"
#include "propagate/events.h"

enum { KV_STR, KV_INT, KV_NOTE };

/* A string value cut at HT_KV_VALUE_MAX bytes, not inside a UTF-8
 * character: into buf (HT_KV_VALUE_MAX + 1 bytes) when it had to be. */
static const char *bounded(const char *value, char *buf) {
  size_t n = strnlen(value, HT_KV_VALUE_MAX + 1);
  if (n <= HT_KV_VALUE_MAX)
    return value;
  n = HT_KV_VALUE_MAX;
  while (n > 0 && ((unsigned char)value[n] & 0xC0) == 0x80)
    n--; /* value[n] continues a character: cut before it */
  memcpy(buf, value, n);
  buf[n] = '\0';
  ht_counter_add(HT_CTR_KVS_TRUNCATED, 1);
  return buf;
}

/* A valid key's length; 0 for none that is valid. */
static size_t key_len(const char *key) {
  size_t n = key != NULL ? strnlen(key, HT_KV_KEY_MAX + 1) : 0;
  return n <= HT_KV_KEY_MAX ? n : 0;
}

static int key_ok(const char *key) { return key_len(key) != 0; }

/* One key-value or annotation onto the span of ctx, whose count of them
 * is *count (bounded by max). */
static int record(const ht_trace_context *ctx, unsigned char *count, unsigned max, int type,
                  const char *key, const char *str, int64_t i64) {
  if (type == KV_NOTE ? key == NULL : !key_ok(key) || (type == KV_STR && str == NULL))
    return HT_EINVAL;
  if (*count >= max) {
    ht_counter_add(HT_CTR_KVS_DROPPED, 1);
    return HT_ENOSPC;
  }
  (*count)++;
  const ht_event_ops *ops = ht_events_current();
  char buf[HT_KV_VALUE_MAX + 1];
  if (type == KV_STR)
    ops->kv_str(ctx, key, bounded(str, buf));
  else if (type == KV_INT)
    ops->kv_int(ctx, key, i64);
  else
    ops->annotate(ctx, bounded(key, buf), 0);
  return 0;
}

/* --- the request's server span */

/* The sampled server span of an open request of a traced messenger and
 * its key-values (*kvs), or NULL (unsampled, or not a traced messenger's
 * request: a plain one's has no slot). */
static inline ht_span *request_span(const ht_request *req, ts_kvs **kvs) {
  ts_slot *s = ht_transport_request_slot(req);
  if (s == NULL || !ht_span_writes_(&s->span))
    return NULL;
  *kvs = &s->kv;
  return &s->span;
}

/* The first integer key-value of a server span, kept for its event
 * (span_k) when span_k holds its key: copied while it is measured, a
 * byte at a time (a key is a few bytes: a strnlen and a memcpy cost
 * twice that). 0: kept; else the caller records it as any other. */
static int keep_first_int(ts_kvs *kv, const char *key, int64_t i64) {
  if (kv->key[0] != '\0' || kv->count >= HT_SPAN_KVS_MAX || key == NULL)
    return -1;
  size_t n = 0;
  while (n <= HT_SCHEMA_KV_KEY_MAX && (kv->key[n] = key[n]) != '\0')
    n++;
  if (n == 0 || n > HT_SCHEMA_KV_KEY_MAX) {
    kv->key[0] = '\0'; /* none kept: too long (a tag_i), or empty */
    return -1;
  }
  kv->value = i64;
  kv->count++;
  return 0;
}

static int on_request(ht_request *req, int type, const char *key, const char *str,
                      int64_t i64) {
  ts_kvs *kv;
  ht_span *span = request_span(req, &kv);
  if (span == NULL) /* unsampled, or not a traced messenger's */
    return req == NULL ? HT_EINVAL : 0;
  if (type == KV_INT && keep_first_int(kv, key, i64) == 0)
    return 0;
  return record(&span->ctx, &kv->count, HT_SPAN_KVS_MAX, type, key, str, i64);
}

int ht_request_kv_str(ht_request *req, const char *key, const char *value) {
  return on_request(req, KV_STR, key, value, 0);
}

int ht_request_kv_int(ht_request *req, const char *key, int64_t value) {
  return on_request(req, KV_INT, key, NULL, value);
}

int ht_request_annotate(ht_request *req, const char *name) {
  return on_request(req, KV_NOTE, name, NULL, 0);
}

/* --- the thread's current span: counted per thread, by span id */

static _Thread_local struct {
  uint64_t span_id;
  unsigned char count;
} tl_current;

static int on_current(int type, const char *key, const char *str, int64_t i64) {
  if (key == NULL || (type == KV_STR && str == NULL))
    return HT_EINVAL;
  ht_trace_context ctx;
  if (!ht_current_writes() || !ht_current_get(&ctx))
    return 0; /* no span, or one not written: never half a span */
  if (tl_current.span_id != ctx.span_id) {
    tl_current.span_id = ctx.span_id;
    tl_current.count = 0;
  }
  return record(&ctx, &tl_current.count, HT_SPAN_KVS_MAX, type, key, str, i64);
}

int ht_current_kv_str(const char *key, const char *value) {
  return on_current(KV_STR, key, value, 0);
}

int ht_current_kv_int(const char *key, int64_t value) {
  return on_current(KV_INT, key, NULL, value);
}

int ht_current_annotate(const char *name) { return on_current(KV_NOTE, name, NULL, 0); }

/* --- the next call: kept per thread until a send takes them */

typedef struct pending_kv {
  char key[HT_KV_KEY_MAX + 1];
  char str[HT_KV_VALUE_MAX + 1];
  int64_t i64;
  int type;
} pending_kv;

static _Thread_local struct {
  pending_kv kv[HT_NEXT_CALL_KVS_MAX];
  unsigned char n;
} tl_next;

static int on_next_call(int type, const char *key, const char *str, int64_t i64) {
  if (!key_ok(key) || (type == KV_STR && str == NULL))
    return HT_EINVAL;
  ht_trace_context ctx;
  if (ht_current_get(&ctx) && !(ctx.flags & HT_FLAG_RECORDS) &&
      HT_HINT_SAMPLE(ht_current_.hint) == HT_SAMPLE_DEFAULT)
    return 0; /* a child of an unsampled span: never recorded */
  if (!(ht_current_.hint & HT_HINT_KVS))
    tl_next.n = 0; /* the last ones went with a send (recorded or not) */
  if (tl_next.n >= HT_NEXT_CALL_KVS_MAX) {
    ht_counter_add(HT_CTR_KVS_DROPPED, 1);
    return HT_ENOSPC;
  }
  pending_kv *kv = &tl_next.kv[tl_next.n++];
  char buf[HT_KV_VALUE_MAX + 1];
  kv->type = type;
  memcpy(kv->key, key, strlen(key) + 1);
  if (type == KV_STR) {
    const char *b = bounded(str, buf);
    memcpy(kv->str, b, strlen(b) + 1);
  }
  kv->i64 = i64;
  ht_current_.hint |= HT_HINT_KVS;
  return 0;
}

int ht_next_call_kv_str(const char *key, const char *value) {
  return on_next_call(KV_STR, key, value, 0);
}

int ht_next_call_kv_int(const char *key, int64_t value) {
  return on_next_call(KV_INT, key, NULL, value);
}

void ht_shim_next_call_record(const ht_span *span) {
  const ht_event_ops *ops = ht_events_current();
  for (unsigned i = 0; i < tl_next.n; i++) {
    const pending_kv *kv = &tl_next.kv[i];
    if (kv->type == KV_STR)
      ops->kv_str(&span->ctx, kv->key, kv->str);
    else
      ops->kv_int(&span->ctx, kv->key, kv->i64);
  }
  tl_next.n = 0;
}
