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

typedef struct span span;
struct span {
  uint64_t id, parent_id;
  const char *name, *service, *endpoint, *peer, *procname, *hostname;
  int kind;
  uint32_t flags;
  bool started, ended;
  int64_t start_ns, end_ns;
  int32_t status;         /* span_end status or last status event code */
  const char *status_message;   /* NULL when none */
  int64_t vpid, vtid;
  annotation *annotations;
  size_t n_annotations, cap_annotations;
  tag *tags;
  size_t n_tags, cap_tags;
  uint64_t msgs_sent, msgs_received, bytes_sent, bytes_received;
  /* resolved when the trace is emitted */
  span *parent;
  span **children;
  size_t n_children;
  bool orphan; /* has a parent id that never arrived */
};

typedef struct trace_chunk trace_chunk;

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
  bool lossy;        /* LTTng discarded events while it was recorded */
  bool timed_out;    /* emitted by timeout (live) or at end of input */
  bool incomplete;   /* any of the above */
  span **roots;      /* spans without a (present) parent */
  size_t n_roots;
} trace;

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

#endif
