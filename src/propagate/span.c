/* Span life cycle and annotations. Unsampled spans get ids (to propagate)
 * and return after one flag test everywhere else; so do sampled ones that
 * no session records when they start (span_path.h HT_SPAN_WRITES): no
 * name looked up, no clock read.
 * Must never: allocate, lock, do I/O, or emit an event for an unsampled
 * span.
 */
#include <stddef.h>
#include <string.h>

#include "hoptrace/error.h"
#include "hoptrace/ids.h"
#include "hoptrace/span.h"
#include "common/clock.h"
#include "common/context_check.h"
#include "propagate/events.h"
#include "propagate/span_path.h"

static const char *const kind_names[] = {"internal", "client", "server",
                                         "producer", "consumer"};

const char *ht_span_kind_name(ht_span_kind kind) {
  return (unsigned)kind < 5 ? kind_names[kind] : "unknown";
}

/* The recorder for a live span that is written, else NULL. */
static inline const ht_event_ops *recorder(const ht_span *span) {
  if (__builtin_expect(!span || !ht_span_writes_(span), 1))
    return NULL;
  return ht_events_current();
}

static inline const char *str(const char *s) { return s ? s : ""; }

/* info itself when it has every string (ht_span_info_intern's copies are
 * known by their address; and no copy is made: 18 instructions a
 * two-sided hop), else *safe, a copy with "" for each NULL. */
static inline const ht_span_info *named(const ht_span_info *info, ht_span_info *safe) {
  if (__builtin_expect(info->name && info->service && info->endpoint, 1))
    return info;
  *safe = (ht_span_info){str(info->name), info->kind, str(info->service), str(info->endpoint)};
  return safe;
}

/* A started span, ops its recorder when it is written (span_path.h
 * ht_span_set_): keeps its start and names for the event that records it
 * when it finishes. span_start is called only when it has something to
 * do: names that could not be kept (a span_n now), or a probe watching
 * (events.h watched, which also decides its annotate calls). */
static void begin(ht_span *span, const ht_span_info *info,
                  const ht_event_ops *ops) {
  if (__builtin_expect(ops == NULL, 1)) {
    if (!(span->ctx.flags & HT_FLAG_RECORDS))
      span->state_ = HT_SPAN_LIVE; /* ht_span_set_error reads it */
    return;
  }
  ht_span_info safe;
  span->desc_ = ops->desc_ref(named(info, &safe));
  for (int i = 0; i < HT_MARKS; i++)
    span->marks_[i] = 0;
  if (ops->watched == NULL || *ops->watched != 0)
    span->state_ |= HT_SPAN_CALLS;
  if (span->desc_ == NULL || (span->state_ & HT_SPAN_CALLS))
    ops->span_start(&span->ctx, named(info, &safe), span->desc_);
  span->start_ = ht_clock_now();
  span->state_ |= HT_SPAN_API | (info->kind == HT_SPAN_CLIENT   ? HT_SPAN_CLIENT_SIDE
                                 : info->kind == HT_SPAN_SERVER ? HT_SPAN_SERVER_SIDE
                                                                : 0);
}

/* The smallest span storage a caller may give (ht_span_init sets its
 * size): 2.0's span, up to its last member prob_. Members added since are
 * used only where span->size covers them. */
#define SPAN_SIZE_MIN (offsetof(ht_span, prob_) + sizeof(uint64_t))
/* 2.1's: the key-value kept in the span */
#define SPAN_SIZE_KV (offsetof(ht_span, kv_key_) + sizeof(((ht_span *)0)->kv_key_))

/* Storage prepared by ht_span_init, else nothing is written to it. */
static inline int prepared(const ht_span *span) {
  return span != NULL && span->size >= SPAN_SIZE_MIN;
}

/* A span that failed to start: zeroed but for its size, records nothing. */
static int refuse(ht_span *span, int rc) {
  size_t size = span->size;
  memset(span, 0, SPAN_SIZE_MIN);
  span->size = size;
  return rc;
}

int ht_span_start_root(ht_span *span, const ht_span_info *info,
                       ht_sample_hint hint) {
  if (!prepared(span))
    return HT_EINVAL;
  if (!info)
    return refuse(span, HT_EINVAL);
  begin(span, info, ht_span_root_(span, hint));
  return 0;
}

/* ht_span_start_local past its storage check: start_child's body too
 * (one check, no second call). */
static inline int start_local(ht_span *span, const ht_trace_context *ctx,
                              const ht_span_info *info) {
  if (!info || !ctx)
    return refuse(span, HT_EINVAL);
  int rc = ht_context_check(ctx);
  if (rc != 0)
    return refuse(span, rc);
  begin(span, info, ht_span_child_(span, ctx, ctx->flags));
  return 0;
}

int ht_span_start_local(ht_span *span, const ht_trace_context *ctx,
                        const ht_span_info *info) {
  return prepared(span) ? start_local(span, ctx, info) : HT_EINVAL;
}

int ht_span_start_child(ht_span *span, const ht_span *parent,
                        const ht_span_info *info) {
  if (!prepared(span))
    return HT_EINVAL;
  return start_local(span, parent ? &parent->ctx : NULL, info);
}

int ht_span_start_remote(ht_span *span, const ht_trace_context *remote,
                         const ht_span_info *info) {
  if (!prepared(span))
    return HT_EINVAL;
  if (!info || !remote)
    return refuse(span, HT_EINVAL);
  int rc = ht_context_check(remote);
  if (rc != 0)
    return refuse(span, rc);
  begin(span, info, ht_span_remote_(span, remote));
  return 0;
}

/* HT_MARK_* of a standard annotation, or -1. */
static int mark_of(const char *name) {
  if (name == NULL || name[0] == '\0' || name[1] == '\0' || name[2] != '\0')
    return -1;
  if (name[0] == 'c')
    return name[1] == 's' ? HT_MARK_CS : name[1] == 'r' ? HT_MARK_CR : -1;
  if (name[0] == 's')
    return name[1] == 'r' ? HT_MARK_SR : name[1] == 's' ? HT_MARK_SS : -1;
  return -1;
}

/* HT_SPAN_START_MARKED or HT_SPAN_END_MARKED when name is one of the
 * span's boundary marks, else 0. A client's "cs" and "cr" are its start
 * and end, a server's "sr" and "ss" too (Dapper's and Zipkin's model):
 * they take the boundary's time, the start read when it began and the end
 * the time of the event that writes it, so a two-sided hop reads the
 * clock for its two starts only (with its events' own times: 9 reads a
 * hop become 4). */
static inline uint32_t boundary_of(uint32_t state, const char *name) {
  if (!(state & (HT_SPAN_CLIENT_SIDE | HT_SPAN_SERVER_SIDE)) || name == NULL)
    return 0;
  int client = (state & HT_SPAN_CLIENT_SIDE) != 0;
  if (name[0] != (client ? 'c' : 's') || (name[1] != 's' && name[1] != 'r') ||
      name[2] != '\0')
    return 0;
  /* a client's start is "cs", a server's "sr" */
  return (name[1] == 's') == client ? HT_SPAN_START_MARKED : HT_SPAN_END_MARKED;
}

/* Any other annotation of a written span: a mark not at its boundary
 * (its time read now, the span's marks kept apart in a span_a), one
 * given twice (a note beside the span_a's mark), or any other name (a
 * note). A quiet span keeps no marks. */
static void annotate_apart(ht_span *span, const char *name) {
  int mark = (span->state_ & HT_SPAN_API) ? mark_of(name) : -1;
  int in_span = mark >= 0 && span->marks_[mark] == 0;
  if (in_span)
    span->marks_[mark] = ht_clock_now();
  if (mark >= 0)
    span->state_ |= HT_SPAN_MARKS_APART;
  const ht_event_ops *ops = ht_events_current();
  if (ops)
    ops->annotate(&span->ctx, str(name), in_span);
}

/* A boundary mark given once costs a few compares and two stores; the
 * recorder hears of it only when a probe watches calls (USDT). */
void ht_span_annotate(ht_span *span, const char *name) {
  if (__builtin_expect(!span || !ht_span_writes_(span), 1))
    return;
  uint32_t end = boundary_of(span->state_, name);
  if (end == 0 || (span->state_ & end)) {
    annotate_apart(span, name);
    return;
  }
  span->state_ |= end;
  int client = (span->state_ & HT_SPAN_CLIENT_SIDE) != 0;
  if (end == HT_SPAN_START_MARKED)
    span->marks_[client ? HT_MARK_CS : HT_MARK_SR] = span->start_;
  else
    span->marks_[client ? HT_MARK_CR : HT_MARK_SS] = HT_MARK_AT_END;
  if (__builtin_expect(!(span->state_ & HT_SPAN_CALLS), 1))
    return;
  const ht_event_ops *ops = ht_events_current();
  if (ops)
    ops->annotate(&span->ctx, name, 1);
}

void ht_span_kv_str(ht_span *span, const char *key, const char *value) {
  const ht_event_ops *ops = recorder(span);
  if (ops)
    ops->kv_str(&span->ctx, str(key), str(value));
}

/* Keeps a span API span's first integer key-value for its finishing
 * event (no event, no clock read now); 0 when it does not fit. */
static int keep_kv(ht_span *span, const char *key, int64_t value) {
  if (span->start_ == 0 || (span->state_ & HT_SPAN_KV) || span->size < SPAN_SIZE_KV)
    return 0; /* a quiet span, a second one, or a 2.0 caller's storage */
  for (size_t i = 0; i < sizeof(span->kv_key_); i++) {
    span->kv_key_[i] = key[i];
    if (key[i] == '\0') {
      span->kv_value_ = value;
      span->state_ |= HT_SPAN_KV;
      return 1;
    }
  }
  return 0; /* too long: a tag_i of its own */
}

void ht_span_kv_int(ht_span *span, const char *key, int64_t value) {
  if (__builtin_expect(!span || !ht_span_writes_(span), 1) ||
      keep_kv(span, str(key), value))
    return;
  const ht_event_ops *ops = ht_events_current();
  if (ops)
    ops->kv_int(&span->ctx, str(key), value);
}

void ht_span_kvs(ht_span *span, const ht_kv *kvs, size_t n) {
  const ht_event_ops *ops = recorder(span);
  if (!ops || !kvs || n == 0)
    return;
  size_t take = n > HT_KVS_MAX ? HT_KVS_MAX : n;
  ht_kv safe[HT_KVS_MAX];
  for (size_t i = 0; i < take; i++) {
    safe[i] = kvs[i];
    safe[i].key = str(kvs[i].key);
    if (safe[i].type != HT_KV_INT) {
      safe[i].type = HT_KV_STR;
      safe[i].str = str(kvs[i].str);
    }
  }
  ops->kvs(&span->ctx, safe, take);
  if (take < n)
    ops->kv_int(&span->ctx, "ht.kvs_dropped", (int64_t)(n - take));
}

void ht_span_set_error(ht_span *span, int32_t code, const char *message) {
  if (span && (span->state_ & HT_SPAN_LIVE))
    span->status_ = code;
  const ht_event_ops *ops = recorder(span);
  if (ops)
    ops->status(&span->ctx, code, str(message));
}

void ht_span_msg_send(ht_span *span, ht_msg_type type, uint64_t seq,
                      uint64_t size, const char *peer) {
  const ht_event_ops *ops = recorder(span);
  if (ops)
    ops->msg(&span->ctx, 0, "", type, seq, size, str(peer));
}

void ht_span_msg_recv(ht_span *span, ht_msg_type type, uint64_t seq,
                      uint64_t size, const char *peer) {
  const ht_event_ops *ops = recorder(span);
  if (ops)
    ops->msg(&span->ctx, 1, "", type, seq, size, str(peer));
}

void ht_span_finish_side_kv(ht_span *span, const void *desc,
                            const ht_span_info *info, uint64_t start,
                            const void *peer, uint8_t frames,
                            const char *kv_key, int64_t kv_value) {
  const ht_event_ops *ops = recorder(span);
  if (ops) {
    ht_span_side side = {&span->ctx,
                         desc,
                         {str(info->name), info->kind, str(info->service),
                          str(info->endpoint)},
                         peer,
                         start,
                         NULL,
                         span->status_,
                         frames,
                         span->prob_,
                         kv_key,
                         kv_value,
                         0};
    ops->span_side(&side);
  }
  if (span)
    span->state_ = 0;
}

const void *ht_span_desc_ref(const ht_span *span, const ht_span_info *info) {
  const ht_event_ops *ops = recorder(span);
  if (!ops)
    return NULL;
  ht_span_info safe;
  return ops->desc_ref(named(info, &safe));
}

const void *ht_span_peer_ref(const ht_span *span, const char *peer) {
  const ht_event_ops *ops = recorder(span);
  return ops && peer && peer[0] ? ops->peer_ref(peer) : NULL;
}

/* A span API span's one event. Its frames (events.h HT_SIDE_*_FRAME) are
 * the boundary marks it was given (a client's "cs" and "cr", a server's
 * "sr" and "ss"). */
void ht_span_finish(ht_span *span) {
  if (!span)
    return;
  uint32_t st = span->state_;
  const uint32_t api = HT_SPAN_LIVE | HT_SPAN_WRITES | HT_SPAN_API;
  const ht_event_ops *ops;
  if (__builtin_expect((span->ctx.flags & HT_FLAG_RECORDS) && (st & api) == api, 0) &&
      (ops = ht_events_current()) != NULL) {
    int kv = (st & HT_SPAN_KV) != 0;
    /* named by desc (else its names went apart, in a span_n) */
    int boundary = !(st & HT_SPAN_MARKS_APART) && span->desc_ != NULL;
    ht_span_side side = {&span->ctx, span->desc_, {"", HT_SPAN_INTERNAL, "", ""},
                         NULL, span->start_, span->marks_, span->status_,
                         boundary ? (uint8_t)((st >> HT_SPAN_FRAMES_SHIFT) & 3) : 0,
                         span->prob_, kv ? span->kv_key_ : NULL, kv ? span->kv_value_ : 0,
                         (uint8_t)boundary};
    ops->span_side(&side);
  }
  span->state_ = 0;
}

void ht_context_record_frame(const ht_trace_context *ctx, int dir,
                             const char *annotation, uint32_t type,
                             uint64_t seq, uint64_t size, const char *peer) {
  const ht_event_ops *ops = (ctx->flags & HT_FLAG_RECORDS) ? ht_events_current() : NULL;
  if (ops)
    ops->msg(ctx, dir, str(annotation), type, seq, size, str(peer));
}
