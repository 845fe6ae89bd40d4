/* The event recorder propagate calls for sampled spans: each hook fires
 * the LTTng-UST tracepoint (a no-op until the provider is loaded and a
 * session enables it) and its USDT twin (a no-op until a tool sets the
 * semaphore). Compiled into libhoptrace, which does not link lttng-ust:
 * the tracepoint definitions use dynamic linkage.
 * Must never: block, allocate (but once per new name or peer, intern.c),
 * or build arguments nobody will read.
 */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
/* Every call site is in this file: the tracepoint structures stay inside
 * libhoptrace (lttng-ust gives them default visibility otherwise). */
#define LTTNG_UST_TRACEPOINT_HIDDEN_DEFINITION
#include "hoptrace_tp.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/clock.h"
#include "propagate/events.h"
#include "recording/flight_memory.h"
#include "recording/intern.h"
#include "recording/recorder.h"
#include "recording/usdt.h"
#include "common/tls_hot.h"

/* The span's ids: the first fields of every span event and probe (an
 * event's `ids` is REC_IDS, its `at` REC_AT, the end of span's `rec`). */
#define IDS(c) (c)->trace_id_hi, (c)->trace_id_lo, (c)->span_id, (c)->parent_span_id
#define REC_IDS(c) {IDS(c)}
/* A root (parent 0) carries its sampling probability in the parent's
 * place (hoptrace_schema.h): prob is 0 for any other span. */
#define REC_AT_WORDS(s)                                                        \
  (s)->ctx->trace_id_hi, (s)->ctx->trace_id_lo, (s)->ctx->span_id,             \
      (s)->ctx->parent_span_id | (s)->prob, (s)->start
#define REC_AT(s) {REC_AT_WORDS(s)}
/* Two steps so IDS() expands into four arguments before STAP_PROBEn
 * counts them. */
#define USDT(n, name, ...) USDT_(n, name, __VA_ARGS__)
#define USDT_(n, name, ...) STAP_PROBE##n(hoptrace, name, __VA_ARGS__)

static uint32_t epoch_now(void);

static void on_span_start(const ht_trace_context *c, const ht_span_info *i,
                          const void *desc) {
  if (desc == NULL && lttng_ust_tracepoint_enabled(hoptrace, span_n)) {
    epoch_now(); /* the process's name, once per set of sessions */
    ht_rec_span_n r = {REC_IDS(c), (uint8_t)i->kind, i->name, i->service,
                       i->endpoint};
    lttng_ust_do_tracepoint(hoptrace, span_n, &r);
  }
  if (HT_USDT_ENABLED(span_start))
    USDT(9, span_start, IDS(c), c->flags, (int)i->kind, i->name,
                i->service, i->endpoint);
}

static void on_annotate(const ht_trace_context *c, const char *name,
                        int in_span) {
  if (!in_span && lttng_ust_tracepoint_enabled(hoptrace, note)) {
    ht_rec_note r = {REC_IDS(c), name};
    lttng_ust_do_tracepoint(hoptrace, note, &r);
  }
  if (HT_USDT_ENABLED(annotation))
    USDT(5, annotation, IDS(c), name);
}

/* In memory mode (flight_memory.h), a key-value of a recorded, unsampled
 * span goes to the thread's ring while a session takes span_r. */
static inline bool ctx_to_memory(const ht_trace_context *c) {
  return ht_fm_on() && (c->flags & (HT_FLAG_SAMPLED | HT_FLAG_RECORDED)) == HT_FLAG_RECORDED &&
         lttng_ust_tracepoint_enabled(hoptrace, span_r);
}

/* The key-value into the ring: 1, or 0 when it must be an event now (its
 * trace captured lately, its text longer than a record holds). */
static int memory_tag(const ht_trace_context *c, uint32_t type, const char *k,
                      const char *v, int64_t i) {
  size_t kn = strnlen(k, HT_FM_TAG_TEXT_BYTES);
  size_t vn = v != NULL ? strnlen(v, HT_FM_TAG_TEXT_BYTES) : 0;
  size_t len = kn + 1 + (v != NULL ? vn + 1 : 0);
  if (len > HT_FM_TAG_TEXT_BYTES || ht_fm_recent_now(c->trace_id_hi, c->trace_id_lo))
    return 0;
  ht_fr_record r;
  r.trace_hi = c->trace_id_hi;
  r.trace_lo = c->trace_id_lo;
  r.type = type;
  r.n = HT_FM_TAG_TEXT + (uint32_t)((len + 7) / 8);
  r.w[HT_FM_TAG_SPAN] = c->span_id;
  r.w[HT_FM_TAG_PARENT] = c->parent_span_id;
  r.w[HT_FM_TAG_VALUE] = (uint64_t)i;
  /* the last word's padding, and the words past it: ht_fr_write copies
   * every word */
  memset(r.w + r.n - 1, 0, (HT_FR_WORDS - r.n + 1) * sizeof(r.w[0]));
  char *text = (char *)(r.w + HT_FM_TAG_TEXT);
  memcpy(text, k, kn);
  text[kn] = '\0';
  if (v != NULL) {
    memcpy(text + kn + 1, v, vn);
    text[kn + 1 + vn] = '\0';
  }
  return ht_fr_write(&r) == 0;
}

void ht_recorder_replay_tag(const ht_fr_record *r) {
  char text[HT_FM_TAG_TEXT_BYTES + 1];
  size_t bytes = 8 * (size_t)(r->n - HT_FM_TAG_TEXT);
  memcpy(text, r->w + HT_FM_TAG_TEXT, bytes);
  text[bytes] = '\0';
  size_t kn = strlen(text);
  const char *k = text, *v = kn < bytes ? text + kn + 1 : "";
  const uint64_t *w = r->w;
  if (r->type == HT_FM_TAG_I) {
    ht_rec_tag_i e = {{r->trace_hi, r->trace_lo, w[HT_FM_TAG_SPAN], w[HT_FM_TAG_PARENT]},
                      k, (int64_t)w[HT_FM_TAG_VALUE]};
    lttng_ust_tracepoint(hoptrace, tag_i, &e);
  } else {
    ht_rec_tag_s e = {{r->trace_hi, r->trace_lo, w[HT_FM_TAG_SPAN], w[HT_FM_TAG_PARENT]},
                      k, v};
    lttng_ust_tracepoint(hoptrace, tag_s, &e);
  }
}

static void tag_str(const ht_trace_context *c, const char *k, const char *v) {
  if (ctx_to_memory(c) && memory_tag(c, HT_FM_TAG_S, k, v, 0))
    return;
  if (lttng_ust_tracepoint_enabled(hoptrace, tag_s)) {
    ht_rec_tag_s r = {REC_IDS(c), k, v};
    lttng_ust_do_tracepoint(hoptrace, tag_s, &r);
  }
}

static void tag_int(const ht_trace_context *c, const char *k, int64_t v) {
  if (ctx_to_memory(c) && memory_tag(c, HT_FM_TAG_I, k, NULL, v))
    return;
  if (lttng_ust_tracepoint_enabled(hoptrace, tag_i)) {
    ht_rec_tag_i r = {REC_IDS(c), k, v};
    lttng_ust_do_tracepoint(hoptrace, tag_i, &r);
  }
}

static void on_kv_str(const ht_trace_context *c, const char *k, const char *v) {
  tag_str(c, k, v);
  if (HT_USDT_ENABLED(kv_str))
    USDT(6, kv_str, IDS(c), k, v);
}

static void on_kv_int(const ht_trace_context *c, const char *k, int64_t v) {
  tag_int(c, k, v);
  if (HT_USDT_ENABLED(kv_int))
    USDT(6, kv_int, IDS(c), k, v);
}

static void on_kvs(const ht_trace_context *c, const ht_kv *kvs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (kvs[i].type == HT_KV_INT)
      tag_int(c, kvs[i].key, kvs[i].i64);
    else
      tag_str(c, kvs[i].key, kvs[i].str);
  }
  if (!HT_USDT_ENABLED(kvs))
    return;
  char keys[HT_KVS_TEXT_MAX + 1], strs[HT_KVS_TEXT_MAX + 1];
  uint8_t types[HT_KVS_MAX];
  int64_t ints[HT_KVS_MAX];
  ht_tp_kvs v;
  ht_recorder_join_kvs(kvs, n, keys, strs, types, ints, &v);
  USDT(9, kvs, IDS(c), (int)v.count, keys, types, ints, strs);
}

static void on_status(const ht_trace_context *c, int32_t code, const char *m) {
  if (lttng_ust_tracepoint_enabled(hoptrace, error)) {
    ht_rec_error r = {REC_IDS(c), code, m};
    lttng_ust_do_tracepoint(hoptrace, error, &r);
  }
  if (HT_USDT_ENABLED(status))
    USDT(6, status, IDS(c), code, m);
}

static void on_msg(const ht_trace_context *c, int dir, const char *ann,
                   uint32_t type, uint64_t seq, uint64_t size,
                   const char *peer) {
  if (lttng_ust_tracepoint_enabled(hoptrace, frame)) {
    ht_rec_frame r = {REC_IDS(c), (uint8_t)dir, type, seq, size, ann, peer};
    lttng_ust_do_tracepoint(hoptrace, frame, &r);
  }
  /* USDT: the message probes, or with an annotation the hop probes */
  if (ann[0] == '\0') {
    if (dir == 0 && HT_USDT_ENABLED(msg_send))
      USDT(8, msg_send, IDS(c), type, seq, size, peer);
    else if (dir != 0 && HT_USDT_ENABLED(msg_recv))
      USDT(8, msg_recv, IDS(c), type, seq, size, peer);
  } else if (dir == 0 && HT_USDT_ENABLED(hop_send)) {
    USDT(9, hop_send, IDS(c), ann, type, seq, size, peer);
  } else if (dir != 0 && HT_USDT_ENABLED(hop_recv)) {
    USDT(9, hop_recv, IDS(c), ann, type, seq, size, peer);
  }
}

/* --- schema 2: one event per span side (hoptrace_schema.h) */

/* The process and thread the events name (as getpid() and gettid() say),
 * cached: LTTng's vpid and vtid contexts cost a field write each on every
 * event. A fork's child forgets them (its one thread is a new one too). */
static _Atomic uint32_t rec_pid;
static HT_TLS_HOT uint32_t rec_tid;
static pthread_once_t rec_atfork_once = PTHREAD_ONCE_INIT;

static void rec_forget_ids(void) {
  atomic_store_explicit(&rec_pid, 0, memory_order_relaxed);
  rec_tid = 0;
}

static void rec_register_atfork(void) { pthread_atfork(NULL, NULL, rec_forget_ids); }

__attribute__((noinline)) static uint32_t rec_pid_slow(void) {
  pthread_once(&rec_atfork_once, rec_register_atfork);
  uint32_t pid = (uint32_t)getpid();
  atomic_store_explicit(&rec_pid, pid, memory_order_relaxed);
  return pid;
}

static inline uint32_t rec_vpid(void) {
  uint32_t pid = atomic_load_explicit(&rec_pid, memory_order_relaxed);
  return pid != 0 ? pid : rec_pid_slow();
}

/* Call after rec_vpid() (which registers the fork handler). */
static inline uint32_t rec_vtid(void) {
  if (rec_tid == 0)
    rec_tid = (uint32_t)gettid();
  return rec_tid;
}

/* span_s and span_a's `side` (hoptrace_schema.h): its three words, then status. */
#define REC_SIDE_X(d, p, flags, status)                                        \
  {HT_SIDE_NAMES_OF(d, p), rec_vpid(), HT_SIDE_VTID_FLAGS_OF(rec_vtid(), flags), \
   (uint32_t)(status)}

/* The sessions recording `span` as last seen: lttng-ust publishes a new
 * probe array for the tracepoint whenever a session enabling it comes or
 * goes (NULL: none). A new array starts a new epoch, and every name is
 * written again at its next use, so a session started while the process
 * runs (beside others or not) gets the tables. */
static _Atomic(const void *) seen_probes;

/* When the process event was last written (tracer clock). */
static _Atomic uint64_t process_written_at;

static void write_process(void) {
  char name[17] = "";
  prctl(PR_GET_NAME, name); /* what LTTng's procname context would say */
  ht_rec_process r = {HT_SCHEMA_VERSION, name, rec_vpid()};
  lttng_ust_tracepoint(hoptrace, process, &r);
}

static uint32_t epoch_now(void) {
  const void *probes = *(const void *volatile *)&lttng_ust_tracepoint_hoptrace___span.probes;
  if (atomic_load_explicit(&seen_probes, memory_order_relaxed) == probes ||
      atomic_exchange_explicit(&seen_probes, probes, memory_order_relaxed) == probes)
    return ht_intern_epoch();
  uint32_t epoch = ht_intern_new_epoch();
  /* written now: the next refresh is a period away (once an epoch: the
   * clock read is not on the common path) */
  atomic_store_explicit(&process_written_at, ht_clock_now(), memory_order_relaxed);
  write_process();
  return epoch;
}

/* The process event again when its last writing is ht_intern_refresh
 * old, as the names are (intern.h): an overwrite ring (the flight
 * recorder's) keeps only its last seconds, and a snapshot of it must
 * still say which process wrote the spans. */
static void process_due(uint64_t now) {
  uint64_t last = atomic_load_explicit(&process_written_at, memory_order_relaxed);
  if ((int64_t)(now - last) < ht_intern_refresh ||
      !atomic_compare_exchange_strong_explicit(&process_written_at, &last, now,
                                               memory_order_relaxed,
                                               memory_order_relaxed))
    return;
  write_process();
}

/* The trace flags, which ends were frames, and whether the parent's
 * place holds a root's probability (hoptrace_schema.h). */
_Static_assert(HT_SIDE_START_FRAME << 6 == HT_SCHEMA_FLAG_START_FRAME &&
                   HT_SIDE_END_FRAME << 6 == HT_SCHEMA_FLAG_END_FRAME,
               "a side's frames are its flags' frame bits, shifted");
static uint8_t side_flags(const ht_span_side *s) {
  return (uint8_t)((s->ctx->flags & 0x0fu) |
                   (s->prob != 0 ? HT_SCHEMA_FLAG_ROOT_P : 0) |
                   (s->frames & (HT_SIDE_START_FRAME | HT_SIDE_END_FRAME)) << 6);
}

/* d's desc event, p's peer event: a span names them by their ids. */
static void write_desc(const ht_intern_entry *d) {
  ht_rec_desc r = {d->id, rec_vpid(), d->kind, d->name, d->service, d->endpoint};
  lttng_ust_tracepoint(hoptrace, desc, &r);
}

static void write_peer(const ht_intern_entry *p) {
  ht_rec_peer r = {p->id, rec_vpid(), p->name};
  lttng_ust_tracepoint(hoptrace, peer, &r);
}

/* d's desc event, when it is due in this epoch (ht_intern_claim). */
static void write_desc_due(const ht_intern_entry *d, uint32_t epoch, uint64_t now) {
  if (ht_intern_claim(d, epoch, now))
    write_desc(d);
}

static void write_side_inline(const ht_span_side *s, const ht_intern_entry *p) {
  if (s->kv_key != NULL) /* before its span, as ever */
    tag_int(s->ctx, s->kv_key, s->kv_value);
  ht_rec_span_s r = {REC_SIDE_X(0, 0, side_flags(s), s->status), REC_AT(s),
                     (uint8_t)s->info.kind, s->info.name,
                     s->info.service, s->info.endpoint,
                     p != NULL ? p->name : ""};
  lttng_ust_tracepoint(hoptrace, span_s, &r);
}

_Static_assert(HT_MARK_AT_END == HT_SCHEMA_MARK_AT_END,
               "a mark at the span's end is written as the schema says");

/* A span API span with marks of its own: names from desc, or (desc NULL)
 * a span_n at its start. The caller saw span_a enabled. */
static void write_span_a(const ht_span_side *s, uint32_t epoch) {
  if (s->kv_key != NULL) /* kept in the span: before it, as ever */
    tag_int(s->ctx, s->kv_key, s->kv_value);
  process_due(s->start);
  const ht_intern_entry *d = s->desc;
  if (d != NULL)
    write_desc_due(d, epoch, s->start);
  const uint64_t *m = s->marks;
  ht_rec_span_a r = {REC_SIDE_X(d != NULL ? d->id : 0, 0, side_flags(s), s->status),
                     REC_AT(s),
                     {m[HT_MARK_CS], m[HT_MARK_SR], m[HT_MARK_SS], m[HT_MARK_CR]}};
  lttng_ust_do_tracepoint(hoptrace, span_a, &r);
}

/* A side's two packed words (hoptrace_schema.h): its names and process,
 * then its thread, flags and status; into w[0] and w[1], as span's rec
 * and a memory mode record (flight_memory.h) both hold them. */
_Static_assert(HT_REC_VTID_FLAGS_STATUS == HT_REC_NAMES_VPID + 1 &&
                   HT_FM_VTID_FLAGS_STATUS == HT_FM_NAMES_VPID + 1,
               "a side's packed words are adjacent");
static inline void side_words(uint64_t *w, const ht_span_side *s, const ht_intern_entry *d,
                              const ht_intern_entry *p) {
  w[0] = HT_REC_NAMES_VPID_OF(d->id, p != NULL ? p->id : 0, rec_vpid());
  w[1] = HT_REC_VTID_FLAGS_STATUS_OF(rec_vtid(), side_flags(s), s->status);
}

/* span's seven rec words (hoptrace_schema.h), into w. */
static inline void rec_words(uint64_t *w, const ht_span_side *s,
                             const ht_intern_entry *d, const ht_intern_entry *p) {
  side_words(w + HT_REC_NAMES_VPID, s, d, p);
  const uint64_t at[] = {REC_AT_WORDS(s)};
  memcpy(w + HT_REC_AT, at, sizeof(at));
}

_Static_assert(sizeof(((ht_rec_span_k *)0)->rec) == HT_REC_KV_WORDS * 8 &&
                   sizeof(((ht_rec_span *)0)->rec) == HT_REC_KV_VALUE * 8,
               "span_k's rec is span's, the value, then the key's words");

_Static_assert(sizeof(((ht_span *)0)->kv_key_) == HT_SCHEMA_KV_KEY_MAX + 1,
               "a span API span keeps only keys span_k holds");

/* k's bytes into span_k's key words w (zeroed), little-endian as the
 * schema says; 0 when k does not fit (then a tag_i carries it). */
static inline int pack_key(uint64_t *w, const char *k) {
  for (unsigned i = 0; i < HT_REC_KV_KEY_BYTES; i++) {
    if (k[i] == '\0')
      return 1;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    ((unsigned char *)w)[i] = (unsigned char)k[i];
#else
    w[i / 8] |= (uint64_t)(unsigned char)k[i] << 8 * (i % 8);
#endif
  }
  return 0;
}

/* d's and p's names, and the process's, now: a side of a captured trace
 * that ends after the capture, in memory mode, is written while the
 * replay thread writes the trace's earlier sides with their names (its
 * own memo, ht_recorder_replay_begin), so a name claimed by one thread
 * could come after the other's span; this side brings its own. */
static void write_names(const ht_intern_entry *d, const ht_intern_entry *p) {
  write_process();
  write_desc(d);
  if (p != NULL)
    write_peer(p);
}

/* names_now: a memory mode side of a captured trace (write_names). */
static void write_side(const ht_span_side *s, bool names_now) {
  uint32_t epoch = epoch_now();
  process_due(s->start);
  const ht_intern_entry *p = s->peer;
  const ht_intern_entry *d = s->desc;
  if (d == NULL)
    d = ht_intern_desc((uint8_t)s->info.kind, s->info.name, s->info.service,
                       s->info.endpoint);
  if (d == NULL) { /* the table is full: names inline */
    write_side_inline(s, p);
    return;
  }
  if (names_now) {
    write_names(d, p);
  } else {
    write_desc_due(d, epoch, s->start);
    if (p != NULL && ht_intern_claim(p, epoch, s->start))
      write_peer(p);
  }
  const char *k = s->kv_key;
  if (k != NULL && lttng_ust_tracepoint_enabled(hoptrace, span_k)) {
    ht_rec_span_k rk; /* one event, one field, not two events */
    memset(rk.rec + HT_REC_KV_KEY, 0, HT_REC_KV_KEY_BYTES); /* the key's padding */
    if (pack_key(rk.rec + HT_REC_KV_KEY, k)) {
      rec_words(rk.rec, s, d, p);
      rk.rec[HT_REC_KV_VALUE] = (uint64_t)s->kv_value;
      lttng_ust_do_tracepoint(hoptrace, span_k, &rk);
      return;
    }
  }
  if (k != NULL) /* no span_k, or a longer key */
    tag_int(s->ctx, k, s->kv_value);
  /* without a key-value, side_enabled saw span enabled: not asked again */
  if (k == NULL || lttng_ust_tracepoint_enabled(hoptrace, span)) {
    ht_rec_span r;
    rec_words(r.rec, s, d, p);
    lttng_ust_do_tracepoint(hoptrace, span, &r);
  }
}

/* A session records this side: the event that would carry it is enabled
 * (span_k for a side with its key-value, else span; either falls back to
 * span). */
static int side_enabled(const ht_span_side *s) {
  return lttng_ust_tracepoint_enabled(hoptrace, span) ||
         (s->kv_key != NULL && lttng_ust_tracepoint_enabled(hoptrace, span_k));
}

/* The side's USDT twins, when a tool is attached to any probe (all share
 * one semaphore): out of line, so the common path tests one word. */
__attribute__((noinline, cold)) static void usdt_side(const ht_span_side *s) {
  if (s->kv_key != NULL && HT_USDT_ENABLED(kv_int))
    USDT(6, kv_int, IDS(s->ctx), s->kv_key, s->kv_value);
  if (s->marks != NULL) { /* a span API span: its twin is span_end */
    if (HT_USDT_ENABLED(span_end))
      USDT(5, span_end, IDS(s->ctx), s->status);
    return;
  }
  if (HT_USDT_ENABLED(span)) {
    const ht_intern_entry *p = s->peer, *d = s->desc;
    const ht_trace_context *c = s->ctx;
    USDT(10, span, IDS(c), d != NULL ? (int)d->kind : (int)s->info.kind,
         ht_clock_now() - s->start, s->status, d != NULL ? d->name : s->info.name,
         d != NULL ? d->service : s->info.service, p != NULL ? p->name : "");
  }
}

/* --- memory mode (flight_memory.h) */

/* The side into this thread's ring: 1, or 0 when it must be an event
 * now (its trace was captured lately, its names or key do not fit a
 * record, or no ring could be made). */
static int memory_side(const ht_span_side *s) {
  const ht_intern_entry *p = s->peer;
  const ht_intern_entry *d = s->desc;
  if (d == NULL &&
      (d = ht_intern_desc((uint8_t)s->info.kind, s->info.name, s->info.service,
                          s->info.endpoint)) == NULL)
    return 0;
  const ht_trace_context *c = s->ctx;
  uint64_t end = ht_clock_now();
  if (ht_fm_recent(c->trace_id_hi, c->trace_id_lo, end))
    return 0;
  ht_fr_record r;
  uint64_t *w = r.w;
  memset(w + HT_FM_KEY, 0, HT_REC_KV_KEY_BYTES);
  if (s->kv_key != NULL && !pack_key(w + HT_FM_KEY, s->kv_key))
    return 0;
  r.trace_hi = c->trace_id_hi;
  r.trace_lo = c->trace_id_lo;
  r.type = HT_FM_SIDE;
  r.n = HT_FM_WORDS;
  side_words(w + HT_FM_NAMES_VPID, s, d, p);
  w[HT_FM_SPAN] = c->span_id;
  w[HT_FM_PARENT] = c->parent_span_id | s->prob;
  w[HT_FM_START] = s->start;
  w[HT_FM_VALUE] = (uint64_t)s->kv_value;
  w[HT_FM_END] = end;
  w[HT_FM_DESC] = (uint64_t)(uintptr_t)d;
  w[HT_FM_PEER] = (uint64_t)(uintptr_t)p;
  return ht_fr_write(&r) == 0;
}

_Static_assert(HT_FM_KEY + HT_REC_KV_KEY_BYTES / 8 == HT_FM_END, "a record's key words");

/* The names the replay thread wrote in its current batch: each once a
 * batch (the process too), before the first of the batch's sides that
 * needs it, all on the one thread, so earlier in the snapshot than that
 * side. A new session's epoch starts the memo again. Replay thread only. */
#define REPLAY_NAMED 64
static struct {
  uint32_t epoch;
  bool process;
  unsigned n;
  const ht_intern_entry *named[REPLAY_NAMED];
} replay_memo;

void ht_recorder_replay_begin(void) {
  replay_memo.n = 0;
  replay_memo.process = false;
}

/* true when e was written in this batch; else remembers it (when room). */
static bool replay_named(const ht_intern_entry *e) {
  for (unsigned i = 0; i < replay_memo.n; i++)
    if (replay_memo.named[i] == e)
      return true;
  if (replay_memo.n < REPLAY_NAMED)
    replay_memo.named[replay_memo.n++] = e;
  return false;
}

void ht_recorder_replay_side(const ht_fr_record *r) {
  const uint64_t *w = r->w;
  const ht_intern_entry *d = (const ht_intern_entry *)(uintptr_t)w[HT_FM_DESC];
  const ht_intern_entry *p = (const ht_intern_entry *)(uintptr_t)w[HT_FM_PEER];
  uint32_t epoch = epoch_now(); /* a new session's epoch, as any writer notices it */
  if (epoch != replay_memo.epoch) {
    ht_recorder_replay_begin();
    replay_memo.epoch = epoch;
  }
  if (!replay_memo.process) {
    write_process();
    replay_memo.process = true;
  }
  if (!replay_named(d))
    write_desc(d);
  if (p != NULL && !replay_named(p))
    write_peer(p);
  ht_rec_span_r e = {{w[HT_FM_NAMES_VPID], w[HT_FM_VTID_FLAGS_STATUS], r->trace_hi,
                      r->trace_lo, w[HT_FM_SPAN], w[HT_FM_PARENT], w[HT_FM_START],
                      w[HT_FM_VALUE], w[HT_FM_KEY], w[HT_FM_KEY + 1], w[HT_FM_KEY + 2],
                      w[HT_FM_KEY + 3], w[HT_FM_END]}};
  lttng_ust_tracepoint(hoptrace, span_r, &e);
}

static void write_capture(uint64_t hi, uint64_t lo, uint64_t span, uint8_t why,
                          uint8_t hops, uint64_t threshold, uint64_t value,
                          const char *origin) {
  ht_rec_capture r = {{hi, lo, span, 0}, rec_vpid(), why, hops, threshold, value, origin};
  lttng_ust_tracepoint(hoptrace, capture, &r);
}

void ht_recorder_replay_capture(const ht_fm_capture *c) {
  write_capture(c->trace_hi, c->trace_lo, c->span_id, c->why, c->hops, c->threshold,
                c->value, c->origin);
}

/* In memory mode, an unsampled side of a trace recorded for the flight
 * recorder goes to the ring while a session takes span_r (a sampled one
 * is written as ever, for a recording beside). */
static inline bool to_memory(const ht_span_side *s) {
  return ht_fm_on() && !(s->ctx->flags & HT_FLAG_SAMPLED) &&
         (s->marks == NULL || s->boundary) &&
         lttng_ust_tracepoint_enabled(hoptrace, span_r);
}

static void on_span_side(const ht_span_side *s) {
  bool memory = to_memory(s);
  if (memory && memory_side(s)) {
    if (HT_USDT_ANY_ENABLED)
      usdt_side(s);
    return;
  }
  /* a span API span whose marks are its frames is written as the
   * messenger's sides are (span or span_k: one event), unless the
   * session has only span_a */
  if ((s->marks == NULL || s->boundary) && side_enabled(s))
    write_side(s, memory);
  else if (s->marks != NULL && lttng_ust_tracepoint_enabled(hoptrace, span_a))
    write_span_a(s, epoch_now());
  if (HT_USDT_ANY_ENABLED)
    usdt_side(s);
}

/* In memory mode the capture waits for the replay thread to write the
 * trace's sides before it (flight_memory.h). */
static int on_capture(const ht_trace_context *c, const ht_capture_note *n) {
  if (!lttng_ust_tracepoint_enabled(hoptrace, capture))
    return 0;
  if (ht_fm_on() && lttng_ust_tracepoint_enabled(hoptrace, span_r)) {
    ht_fm_capture k = {.trace_hi = c->trace_id_hi, .trace_lo = c->trace_id_lo,
                       .span_id = c->span_id, .threshold = n->threshold,
                       .value = n->value, .why = n->why, .hops = n->hops};
    snprintf(k.origin, sizeof(k.origin), "%s", n->origin);
    if (ht_fm_capture_later(&k, ht_clock_now()) == 0)
      return 1;
  }
  write_capture(c->trace_id_hi, c->trace_id_lo, c->span_id, n->why, n->hops,
                n->threshold, n->value, n->origin);
  return 1;
}

/* Interned entries: they live as long as the process. */
static const void *on_desc_ref(const ht_span_info *i) {
  return ht_intern_info_desc(i);
}

static const void *on_peer_ref(const char *peer) { return ht_intern_peer(peer); }

/* A session has a span event enabled, or a tool attached to a span's
 * probes: the spans starting now are written (events.h). */
static int on_recording(void) {
  return lttng_ust_tracepoint_enabled(hoptrace, span) ||
         lttng_ust_tracepoint_enabled(hoptrace, span_k) ||
         lttng_ust_tracepoint_enabled(hoptrace, span_a) || HT_USDT_ANY_ENABLED;
}

const ht_event_ops ht_recorder_ops = {
    .span_start = on_span_start,
    .annotate = on_annotate,
    .kv_str = on_kv_str,
    .kv_int = on_kv_int,
    .kvs = on_kvs,
    .status = on_status,
    .msg = on_msg,
    .span_side = on_span_side,
    .desc_ref = on_desc_ref,
    .peer_ref = on_peer_ref,
    .capture = on_capture,
    .recording = on_recording,
    .watched = &hoptrace_span_semaphore, /* every probe's (usdt.h) */
};
