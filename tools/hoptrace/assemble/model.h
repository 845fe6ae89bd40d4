/* Spans and traces assembled from hop events. Plain data, owned by the
 * assembler; exporters only read them. */
#ifndef HT_TOOL_MODEL_H
#define HT_TOOL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tag {
  const char *key;
  bool is_int;
  int64_t int_value;
  const char *str_value;
} tag;

typedef struct annotation {
  int64_t ts_ns;
  const char *value;
} annotation;

/* 176 bytes: a trace with every span open at once is what memory holds
 * (pointers first, then the narrow fields, no padding holes). */
typedef struct span span;
struct span {
  uint64_t id, parent_id;
  const char *name, *service, *endpoint, *peer, *procname, *hostname;
  int64_t start_ns, end_ns;
  /* Clock alignment (align.h): what was added to this span's times to put
   * them on the reference host's clock (at its start), and the bound of
   * that correction; clock_bound_ns < 0: the run did not align clocks. */
  int64_t clock_shift_ns, clock_bound_ns;
  const char *status_message;   /* NULL when none */
  annotation *annotations;
  tag *tags;
  /* resolved when the trace is emitted */
  span *parent;
  span **children;
  int32_t vpid, vtid;     /* -1 when unknown */
  int32_t status;         /* span_end status or last status event code */
  uint32_t flags;
  uint32_t n_annotations, cap_annotations;
  uint32_t n_tags, cap_tags;
  uint32_t n_children;
  int8_t kind;
  bool started, ended;
  bool orphan; /* has a parent id that never arrived */
};

typedef struct trace_chunk trace_chunk;

/* A process a capture notice reached (hops > 0), and whether any span of
 * the trace was recorded by it. */
typedef struct capture_proc {
  const char *host; /* "" when the stream names none */
  int32_t pid;
  bool has_spans;
} capture_proc;

#define CAPTURE_MAX_PROCS 32 /* past this, answering processes are counted only */

typedef struct capture_info {
  uint32_t events;   /* capture events of the trace (triggers and notices) */
  uint32_t triggers; /* of them, with hops 0: a trigger fired in that process */
  /* the first trigger (why 0: none seen, only notices) */
  uint8_t why; /* HT_CAPTURE_* */
  uint64_t threshold, value;
  const char *origin, *host; /* the service whose trigger fired, its host */
  int32_t pid;
  /* processes that answered a notice (distinct host and pid) */
  uint32_t answered, n_procs;
  capture_proc procs[CAPTURE_MAX_PROCS];
  /* completeness, at emission: processes it reached with no span of the
   * trace (their part overwritten before the notice came), the first one;
   * and client calls answered whose server span is absent, the first
   * one's peer */
  uint32_t procs_gone;
  const char *gone_host;
  int32_t gone_pid;
  uint32_t servers_gone;
  const char *servers_gone_peer;
} capture_info;

typedef struct trace {
  uint64_t trace_hi, trace_lo;
  span **spans;
  size_t n_spans, cap_spans;
  trace_chunk *chunks; /* every span, string and array of the trace */
  span *last_span;     /* the span the previous event touched */
  bool spans_indexed;  /* big trace: spans also in the assembler's map */
  int64_t first_ns, last_ns;
  /* completeness, set when emitted */
  size_t orphans;    /* spans whose parent never arrived */
  size_t unfinished; /* spans without start or end */
  bool lossy;        /* LTTng discarded events of a host it has spans on */
  const char *lossy_host;   /* that (first) host; NULL: a stream with no hostname */
  bool timed_out;    /* emitted by timeout (live) or at end of input */
  uint32_t missing_spans;   /* server spans a host never recorded (host_health.h) */
  const char *missing_host; /* the (first) host they were missing from */
  /* past a limit (read/limits.h): span events dropped past
   * --max-trace-spans; written before its grace, too many traces open */
  uint32_t dropped_spans;
  bool written_early;
  uint32_t strings_cut; /* strings cut to --max-string */
  /* events of the trace the decoder dropped as malformed (read/event.h
   * HOP_MALFORMED): a part of it is gone */
  uint32_t malformed_events;
  /* events of it the relay's files held and the live stream never
   * delivered (read/relay_check.h), and their (first) host */
  uint32_t unreceived;
  const char *unreceived_host;
  /* marked at a live end not compared with the relay's files (no
   * --relay-dir): unreceived_host's last event received, after which
   * spans may be missing */
  bool end_unchecked;
  int64_t end_last_ns;
  bool incomplete;   /* any of the above */
  /* never silently wrong, set when emitted: spans sharing their id with
   * another span of the trace (each kept apart, flagged
   * SPAN_ID_DUPLICATE_KEY), spans ending before they start (flagged
   * END_BEFORE_START_KEY) */
  size_t duplicate_ids, backwards;
  /* the probability its root was sampled with, * 2^32 (2^32: 1), as the
   * root's span side recorded it; 0: unknown (a rate-limited root, a
   * recording older than hoptrace 0.2.0, a root never recorded). It may
   * be impossible (above ROOT_PROB_ONE: p > 1, or ROOT_PROB_ZERO: p = 0,
   * from a hostile or corrupt trace): read it through trace_root_prob */
  uint64_t root_prob;
  span **roots;      /* spans without a (present) parent */
  size_t n_roots;
  /* Flight recorder: the capture events of this trace (read/event.h
   * HOP_CAPTURE). The trigger is the first event with hops 0 (the process
   * that fired); the others with hops > 0 are the processes a capture
   * notice reached. Set as the events come; the checks at emission. */
  capture_info *capture; /* NULL: not captured */
  /* followed live, written when the follower stopped before its settle
   * time (cli/flight_follow.h): a later snapshot might have held more */
  bool unsettled;
} trace;

/* The tags that flag a span whose own events contradict each other. */
#define SPAN_ID_DUPLICATE_KEY "hoptrace.span_id.duplicate"
#define END_BEFORE_START_KEY "hoptrace.time.end_before_start_ns"

#define ROOT_PROB_ONE (UINT64_C(1) << 32) /* p = 1, * 2^32 */
#define ROOT_PROB_ZERO UINT64_MAX          /* a root that recorded p = 0 */

/* A root's probability outside (0, 1]: flagged on the root span
 * (hoptrace.sampling.probability.invalid) and counted, never a weight. */
static inline bool trace_root_prob_invalid(const trace *t) {
  return t->root_prob > ROOT_PROB_ONE;
}

/* The root's probability * 2^32 when possible, else 0 (unknown). */
static inline uint64_t trace_root_prob(const trace *t) {
  return trace_root_prob_invalid(t) ? 0 : t->root_prob;
}

/* When a span is shown to start: its start; for a span never started
 * (only its tags, annotations or end seen) the earliest time known for
 * it: its first event's (start_ns holds it then: assemble.c), its first
 * annotation, its end, its children's starts. 0 (1970) only when no
 * time at all is known. */
static inline int64_t span_shown_start_ns(const span *s) {
  if (s->started)
    return s->start_ns;
  int64_t at = s->start_ns;
  if (s->n_annotations && (at == 0 || s->annotations[0].ts_ns < at))
    at = s->annotations[0].ts_ns;
  if (s->ended && (at == 0 || s->end_ns < at))
    at = s->end_ns;
  for (size_t i = 0; i < s->n_children; i++)
    if (s->children[i]->started && (at == 0 || s->children[i]->start_ns < at))
      at = s->children[i]->start_ns;
  return at;
}

/* Recorded by a flight-mode process and not kept by its head sampler:
 * some span carries the trace's RECORDED flag and none SAMPLED (a
 * flight-only trace in a recording beside a head-sampled session). */
#define TRACE_FLAG_SAMPLED 0x1u
#define TRACE_FLAG_RECORDED 0x8u
static inline bool trace_recorded_not_kept(const trace *t) {
  bool recorded = false;
  for (size_t i = 0; i < t->n_spans; i++) {
    if (t->spans[i]->flags & TRACE_FLAG_SAMPLED)
      return false;
    recorded |= (t->spans[i]->flags & TRACE_FLAG_RECORDED) != 0;
  }
  return recorded;
}

/* a - b in ns, saturated to int64: a corrupt trace's times may lie
 * anywhere in int64, their difference past it. */
static inline int64_t ns_diff(int64_t a, int64_t b) {
  int64_t d;
  if (!__builtin_sub_overflow(a, b, &d))
    return d;
  return a > b ? INT64_MAX : INT64_MIN;
}

/* a + b, saturated to int64 likewise. */
static inline int64_t ns_sum(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r))
    return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

/* Duration in ns, or 0 if the span lacks start or end. Saturates: a
 * corrupt trace's timestamps may lie anywhere in int64. */
static inline int64_t span_duration_ns(const span *s) {
  if (!s->started || !s->ended || s->end_ns <= s->start_ns)
    return 0;
  uint64_t d = (uint64_t)s->end_ns - (uint64_t)s->start_ns;
  return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}

/* Timestamp of the first annotation named `value`, or 0. */
int64_t span_annotation_ns(const span *s, const char *value);

/* A client span whose request frame went out (its "cs"): one without
 * never reached a server (refused before encoding, or its send failed),
 * so no server span is owed to it. */
static inline bool span_reached_server(const span *s) {
  return span_annotation_ns(s, "cs") != 0;
}

#endif
