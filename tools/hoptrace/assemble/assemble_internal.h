/* The assembler's state, shared by the files it is made of: assemble.c
 * (open traces, adding events, emitting), span_link.c (a trace's spans
 * found by id, linked into a tree at emission) and host_marks.c (marks
 * that come from outside the event stream: losses, a live input's end).
 * Only those include it. */
#ifndef HT_TOOL_ASSEMBLE_INTERNAL_H
#define HT_TOOL_ASSEMBLE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "assemble/assemble.h"
#include "assemble/idmap.h"
#include "assemble/span_store.h"

typedef struct host_loss {
  char *host;
  int64_t end_ns;
} host_loss;

typedef struct open_trace {
  trace *t;
  int64_t born, touched; /* the stamps when it opened, when last added to */
  struct open_trace *prev, *next; /* by last activity, oldest first */
} open_trace;

struct assembler {
  trace_ready_fn ready;
  void *user;
  trace_check_fn check; /* NULL: none */
  void *check_user;
  trace_keep_fn keep_fn; /* NULL: every trace */
  void *keep_user;
  trace_emitted_fn emitted; /* NULL: none */
  void *emitted_user;
  int64_t grace_ns, timeout_ns;
  idmap traces; /* (hi, lo) -> open_trace */
  idmap spans;  /* (trace address, span id) -> span, big traces only */
  span_mem *mem;
  open_trace *oldest, *newest;
  size_t open;
  uint64_t open_spans; /* spans of the open traces */
  bool keep; /* emitted traces are freed by assembler_release */
  int64_t now_ns;
  int64_t stamp; /* assembler_set_stamp */
  /* events added, the latest event time; live idle time (assembler_idle):
   * its monotonic anchor and the events added when it was taken */
  uint64_t added, idle_added;
  int64_t events_ns, idle_mono_ns;
  bool idle_anchored;
  host_loss *losses; /* hosts that lost events, NULL: none so far */
  size_t n_losses, cap_losses;
  assembler_stats stats;
};

/* span_link.c */
/* The span of t with that id (the newest of a duplicated id), NULL. */
span *assembler_find_span(const assembler *a, const trace *t, uint64_t id);
/* Indexes s, just added to t, once t is big enough. 0, or -1. */
int assembler_index_span(assembler *a, trace *t, span *s);
/* Every span of t started and ended, every parent present. */
int assembler_is_complete(const assembler *a, const trace *t);
/* Links t's parents and children, settles its capture, marks it
 * incomplete or not and tags its limits. 0, or -1 out of memory. */
int assembler_resolve(assembler *a, trace *t);

/* host_marks.c */
/* Marks t lossy when s, of a host that lost events, was running when
 * that host's latest loss ended. */
void assembler_mark_late_loss(assembler *a, trace *t, const span *s);

#endif
