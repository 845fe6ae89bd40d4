/* A trace's spans found by id while events are added (small traces by
 * a linear search, big ones through the assembler's span map), and
 * linked into a tree when the trace is emitted. */
#include "assemble/assemble_internal.h"

#include <stdint.h>

#include "assemble/capture.h"
#include "assemble/span_checks.h"
#include "assemble/trace_limits.h"

/* Traces up to this many spans are searched linearly (cache friendly);
 * bigger ones are also indexed in the assembler's span map. */
#define LINEAR_SPANS 32

span *assembler_find_span(const assembler *a, const trace *t, uint64_t id) {
  if (t->last_span != NULL && t->last_span->id == id)
    return t->last_span;
  if (t->spans_indexed)
    return idmap_get(&a->spans, (uint64_t)(uintptr_t)t, id);
  for (size_t i = t->n_spans; i > 0; i--)
    if (t->spans[i - 1]->id == id)
      return t->spans[i - 1];
  return NULL;
}

int assembler_index_span(assembler *a, trace *t, span *s) {
  if (!t->spans_indexed && t->n_spans > LINEAR_SPANS) {
    for (size_t i = 0; i < t->n_spans; i++)
      if (idmap_put(&a->spans, (uint64_t)(uintptr_t)t, t->spans[i]->id, t->spans[i]) != 0)
        return -1;
    t->spans_indexed = true;
    return 0;
  }
  if (t->spans_indexed)
    return idmap_put(&a->spans, (uint64_t)(uintptr_t)t, s->id, s);
  return 0;
}

int assembler_is_complete(const assembler *a, const trace *t) {
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    if (!s->started || !s->ended)
      return 0;
    if (s->parent_id != 0 && assembler_find_span(a, t, s->parent_id) == NULL)
      return 0;
  }
  return 1;
}

/* Links parents and children; counts what is missing. A span in a parent
 * cycle is cut loose and counted as an orphan, so it still shows up. */
int assembler_resolve(assembler *a, trace *t) {
  t->roots = trace_alloc(a->mem, t, (t->n_spans ? t->n_spans : 1) * sizeof(span *));
  if (t->roots == NULL)
    return -1;
  for (size_t i = 0; i < t->n_spans; i++) {
    span *s = t->spans[i];
    s->parent = s->parent_id ? assembler_find_span(a, t, s->parent_id) : NULL;
  }
  span_cut_cycles(t);
  for (size_t i = 0; i < t->n_spans; i++) {
    span *s = t->spans[i];
    if (!s->started || !s->ended)
      t->unfinished++;
    else if (s->end_ns < s->start_ns && span_flag_backwards(a->mem, t, s) != 0)
      return -1;
    if (s->parent_id != 0 && s->parent == NULL) {
      s->orphan = true;
      t->orphans++;
    }
    if (s->parent == NULL)
      t->roots[t->n_roots++] = s;
    else
      s->parent->n_children++; /* counted first, filled below */
  }
  for (size_t i = 0; i < t->n_spans; i++) {
    span *s = t->spans[i];
    if (s->n_children > 0) {
      s->children = trace_alloc(a->mem, t, s->n_children * sizeof(span *));
      if (s->children == NULL)
        return -1;
      s->n_children = 0;
    }
  }
  for (size_t i = 0; i < t->n_spans; i++)
    if (t->spans[i]->parent != NULL) {
      span *p = t->spans[i]->parent;
      p->children[p->n_children++] = t->spans[i];
    }
  if (a->check != NULL)
    a->check(a->check_user, t);
  if (t->capture != NULL && capture_settle(a->mem, t) != 0)
    return -1;
  t->incomplete = t->unfinished || t->orphans || t->lossy || t->timed_out || t->missing_spans ||
                  t->dropped_spans || t->malformed_events || t->unreceived ||
                  (t->capture != NULL && capture_partial(t));
  return trace_limit_tags(a->mem, t);
}
