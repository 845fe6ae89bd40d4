/* The critical path of one trace, as CRISP (Uber, ATC '22) walks it:
 * from the longest root's end backwards, the child that finishes last is
 * on the path, then the one that finished before that child started, and
 * so on; between them the span's own time is on the path. A child whose
 * times fall outside its parent (clocks of two hosts, or a detached
 * child) is clamped to the parent and counted. Every nanosecond of the
 * root's duration is given to exactly one (span, phase): the shares of a
 * trace add up to its end-to-end time. Used by the report's slowest
 * traces and by its aggregate (report_cpagg.h). */
#ifndef HT_TOOL_REPORT_CRITICAL_H
#define HT_TOOL_REPORT_CRITICAL_H

#include <stdint.h>

#include "assemble/model.h"

/* Where time on the path goes. A client span's own time outside its
 * cs..cr is client queue; between them, its server span's request
 * (cs -> sr) and reply (ss -> cr) phases, or waiting on a child when it
 * has no server span (never recorded, never reached). A server's (or
 * internal span's) own time is its service self time. */
enum {
  CP_CLIENT_QUEUE,
  CP_REQUEST,
  CP_SERVICE,
  CP_WAIT_CHILD,
  CP_REPLY,
  CP_PHASES
};
extern const char *const cp_phase_names[CP_PHASES];

#define CP_DEPTH_MAX 64 /* deeper spans' time stays their ancestor's own */

typedef struct cp_visitor {
  /* A span entered, at depth (root 0), on the path over [lo, hi]. May be
   * NULL. */
  void (*span)(void *user, const span *s, int depth, int64_t lo, int64_t hi);
  /* ns of phase on the path, spent in s (request and reply: s the client
   * span, server its server span; otherwise server is NULL). */
  void (*segment)(void *user, const span *s, const span *server, int phase, int64_t ns);
  void *user;
} cp_visitor;

typedef struct cp_stats {
  uint64_t clamped;    /* children partly or wholly outside their parent */
  int64_t clamped_ns;  /* their time cut off by the clamp */
  uint64_t too_deep;   /* spans whose children were not followed */
} cp_stats;

/* Scratch memory a walk needs, reused from trace to trace. */
typedef struct cp_scratch {
  void *buf;
  size_t cap;
} cp_scratch;

/* The trace's longest root (NULL: no span). */
const span *cp_root(const trace *t);

/* Walks t's critical path from cp_root; stats added to. 0, or -1 out of
 * memory (nothing visited). */
int cp_walk(const trace *t, const cp_visitor *v, cp_stats *stats, cp_scratch *scratch);

void cp_scratch_free(cp_scratch *s);

#endif
