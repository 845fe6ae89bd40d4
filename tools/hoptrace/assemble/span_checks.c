/* Checks of a trace's spans against each other, for input that is corrupt
 * or hostile: parent cycles, a span id started twice, an end before the
 * start. Each linear in the trace. */
#include "assemble/span_checks.h"

#include <string.h>

/* Cuts every parent cycle (a corrupt or hostile trace can name its own
 * descendant as parent) in one pass over the trace: each span is walked
 * through once, so a chain of a million spans costs a million steps, not
 * a walk to the root from every span. A walk marks the spans it passes;
 * meeting its own mark again closes a cycle, cut at the span that closed
 * it (every span of the walk stays reachable for the second pass, which
 * marks them done). n_children is the mark: it is counted only later. */
enum { WALK_NONE, WALK_ON_PATH, WALK_DONE };

void span_cut_cycles(trace *t) {
  for (size_t i = 0; i < t->n_spans; i++) {
    span *s = t->spans[i], *p = s, *last = NULL;
    while (p != NULL && p->n_children == WALK_NONE) {
      p->n_children = WALK_ON_PATH;
      last = p;
      p = p->parent;
    }
    if (p != NULL && p->n_children == WALK_ON_PATH)
      last->parent = NULL;
    for (p = s; p != NULL && p->n_children == WALK_ON_PATH; p = p->parent)
      p->n_children = WALK_DONE;
  }
  for (size_t i = 0; i < t->n_spans; i++)
    t->spans[i]->n_children = 0;
}

/* An event that starts its span, for a span already started (a span
 * side's named_apart start came with its HOP_SPAN_NAMES): another span
 * with the same id, a hostile or corrupt trace's. */
bool span_starts_again(const span *s, const hop_event *ev) {
  switch (ev->kind) {
  case HOP_SPAN_START:
  case HOP_SPAN_START_SEND:
  case HOP_SPAN_START_RECV:
  case HOP_SPAN_NAMES:
    return s->started;
  case HOP_SPAN_SIDE:
    return ev->named_apart ? s->ended : s->started;
  default:
    return false;
  }
}

bool span_has_tag(const span *s, const char *key) {
  for (uint32_t i = 0; i < s->n_tags; i++)
    if (strcmp(s->tags[i].key, key) == 0)
      return true;
  return false;
}

/* A span ending before it starts (a clock set back while it ran, or a
 * hostile trace): flagged with how far back, counted. */
int span_flag_backwards(span_mem *mem, trace *t, span *s) {
  t->backwards++;
  uint64_t back = (uint64_t)s->start_ns - (uint64_t)s->end_ns;
  return span_add_tag(mem, t, s, END_BEFORE_START_KEY, true,
                      back > INT64_MAX ? INT64_MAX : (int64_t)back, NULL);
}
