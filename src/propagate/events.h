/* The event interface between propagate (pure logic) and whatever records
 * events (shim/: LTTng-UST + USDT). Propagate calls these only for sampled
 * spans; it never knows what is behind them.
 *
 * Must never: allocate, block, or call back into propagate.
 */
#ifndef HT_PROPAGATE_EVENTS_H
#define HT_PROPAGATE_EVENTS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "hoptrace/context.h"
#include "hoptrace/span.h"
#include "common/tls_hot.h"

/* A span side: the span's start and end, the hops around them ("cs"/"cr"
 * for a client, "sr"/"ss" for a server: its start and end) and its
 * names. Strings never NULL. A span of the span API also carries the
 * times of its standard annotations (marks). */
typedef struct ht_span_side {
  const ht_trace_context *ctx;
  const void *desc;     /* from desc_ref; NULL: info names the span, or,
                           with marks, span_start was told it had none */
  ht_span_info info;
  const void *peer;     /* from peer_ref, or NULL */
  uint64_t start;       /* ht_clock_now() when it started */
  const uint64_t *marks; /* NULL, or HT_MARKS times ("cs", "sr", "ss",
                            "cr"; 0: none; HT_MARK_AT_END), a span API
                            span */
  int32_t status;
  uint8_t frames;       /* HT_SIDE_*_FRAME */
  uint64_t prob;        /* a root's sampling probability (sampler.h's
                           fixed point), 0: unknown or not a root */
  const char *kv_key;   /* the key (valid for the call), or NULL: the
                           span's one integer key-value written with it */
  int64_t kv_value;
  uint8_t boundary;     /* with marks: they are only its frames (a
                           client's "cs"/"cr", a server's "sr"/"ss" at its
                           start and end), so it may be written as the
                           messenger's sides are */
} ht_span_side;

/* Which ends of a span side were a frame: a client's start is "cs" and
 * its end "cr", a server's "sr" and "ss"; a timed-out call ends without. */
enum { HT_SIDE_START_FRAME = 1, HT_SIDE_END_FRAME = 2 };

/* The standard annotations a span API span keeps until it finishes. */
enum { HT_MARK_CS, HT_MARK_SR, HT_MARK_SS, HT_MARK_CR, HT_MARKS };

/* A mark's time that is the span's end: the time of the record that
 * writes the span (a client's "cr", a server's "ss": no clock read). */
#define HT_MARK_AT_END UINT64_MAX

/* A capture: why (HT_CAPTURE_* of hoptrace_schema.h), how many notice
 * hops from the process that fired it (0: this one), the threshold and
 * the value that crossed it (ns; an error's status as value), and the
 * service whose trigger fired (never NULL). */
typedef struct ht_capture_note {
  uint8_t why, hops;
  uint64_t threshold, value;
  const char *origin;
} ht_capture_note;

/* Every hook gets the span's context; strings are never NULL (propagate
 * substitutes ""). Hooks run on the thread that called the span function.
 * A span is recorded when it finishes (span_side); what happens to it
 * before (annotations, key-values, errors, frames) is recorded as it
 * happens, with its ids. */
typedef struct ht_event_ops {
  /* A span API span started; desc from desc_ref (NULL: none could be
   * kept, so its names are recorded now). Nothing else is recorded yet. */
  void (*span_start)(const ht_trace_context *ctx, const ht_span_info *info,
                     const void *desc);
  /* in_span: one of the marks the span's own record will carry (only
   * probes that watch calls fire); else recorded now. */
  void (*annotate)(const ht_trace_context *ctx, const char *name, int in_span);
  void (*kv_str)(const ht_trace_context *ctx, const char *key,
                 const char *value);
  void (*kv_int)(const ht_trace_context *ctx, const char *key, int64_t v);
  /* n <= HT_KVS_MAX */
  void (*kvs)(const ht_trace_context *ctx, const ht_kv *kvs, size_t n);
  void (*status)(const ht_trace_context *ctx, int32_t code,
                 const char *message);
  /* A message sent (dir 0) or received (1) on the span's behalf, and the
   * annotation it makes ("cs", "sr", "ss", "cr", or "" for none). */
  void (*msg)(const ht_trace_context *ctx, int dir, const char *annotation,
              uint32_t type, uint64_t seq, uint64_t size, const char *peer);
  /* One side of a span in one event, when it finishes. */
  void (*span_side)(const struct ht_span_side *side);
  /* References to a span's names and to a peer's name that stay valid
   * for the life of the process, taken while the strings are at hand, for
   * a later span_side; NULL when none can be kept. */
  const void *(*desc_ref)(const ht_span_info *info);
  const void *(*peer_ref)(const char *peer);
  /* A flight-recorder trigger for ctx's trace (capture.h): 1 when a
   * session records it, else 0. May be NULL (a recorder that keeps no
   * captures). */
  int (*capture)(const ht_trace_context *ctx, const struct ht_capture_note *note);
  /* 1 when a span starting now would be written (for LTTng: a session
   * has the span events enabled). Asked once per sampled span, at its
   * start, which keeps the answer: a span that starts unwritten looks
   * nothing up and reads no clock, and finishes unwritten even if a
   * session starts meanwhile. NULL: always (a recorder that keeps
   * everything, as the tests' do). */
  int (*recording)(void);
  /* Non-zero while a probe watches every call (USDT): a span API span
   * started then calls span_start and annotate for all it does; one
   * started without calls neither for its boundary marks ("cs", "sr",
   * "ss", "cr" at its start or end) nor, when its names were kept, for
   * its start: nothing of them is recorded before its own event. Read
   * once per written span API span. NULL: always (the tests'). */
  const volatile unsigned short *watched;
} ht_event_ops;

/* Installs the recorder (NULL: record nothing). ops must stay valid for
 * the rest of the process (a static table): a span may still be calling
 * the previous table. Every hook must be non-NULL but capture and
 * recording (and watched). */
void ht_events_install(const ht_event_ops *ops);

/* events.c's installed table: read inline (span_path.h), every sampled
 * span asks. */
extern HT_HOT_DATA _Atomic(const ht_event_ops *) ht_events_installed_;

#endif /* HT_PROPAGATE_EVENTS_H */
