/* A write built by hand for the critical-path tests (test_critical_path.c,
 * test_diff.c): its times worked out on paper. */
#ifndef HT_TEST_WRITE_TRACE_H
#define HT_TEST_WRITE_TRACE_H

#include <stdint.h>
#include <string.h>

#include "assemble/model.h"
#include "read/event.h"

/* client -> osd.0 osd_write; osd.0 -> osd.1 and osd.2 replica_write.
 * osd.2's service lasts 290 + x ns, everything after it x later. */
typedef struct write {
  span c, s, r1, s1, r2, s2;
  span *spans[6], *roots[1];
  span *c_kids[1], *s_kids[2], *r1_kids[1], *r2_kids[1];
  annotation c_marks[2];
  trace t;
} write;

static inline span mk(uint64_t id, uint64_t parent, const char *svc, const char *name, int kind,
                      int64_t start, int64_t end) {
  return (span){.id = id, .parent_id = parent, .service = svc, .name = name, .kind = (int8_t)kind,
                .start_ns = start, .end_ns = end, .clock_bound_ns = -1, .started = true,
                .ended = true};
}

static inline void link(span *parent, span **kids, span *const *list, uint32_t n) {
  parent->children = kids;
  parent->n_children = n;
  for (uint32_t i = 0; i < n; i++) {
    kids[i] = list[i];
    kids[i]->parent = parent;
  }
}

static inline void make(write *w, int64_t x, uint64_t prob) {
  memset(w, 0, sizeof(*w));
  int64_t b = 1000000; /* a start away from 0 */
  w->c = mk(1, 0, "client", "osd_write", HOP_KIND_CLIENT, b, b + 1000 + x);
  w->s = mk(2, 1, "osd.0", "osd_write", HOP_KIND_SERVER, b + 200, b + 800 + x);
  w->r1 = mk(3, 2, "osd.0", "replica_write", HOP_KIND_CLIENT, b + 300, b + 600);
  w->s1 = mk(4, 3, "osd.1", "replica_write", HOP_KIND_SERVER, b + 350, b + 550);
  w->r2 = mk(5, 2, "osd.0", "replica_write", HOP_KIND_CLIENT, b + 310, b + 700 + x);
  w->s2 = mk(6, 5, "osd.2", "replica_write", HOP_KIND_SERVER, b + 360, b + 650 + x);
  w->c_marks[0] = (annotation){b + 100, "cs"};
  w->c_marks[1] = (annotation){b + 900 + x, "cr"};
  w->c.annotations = w->c_marks;
  w->c.n_annotations = 2;
  link(&w->c, w->c_kids, (span *[]){&w->s}, 1);
  link(&w->s, w->s_kids, (span *[]){&w->r1, &w->r2}, 2);
  link(&w->r1, w->r1_kids, (span *[]){&w->s1}, 1);
  link(&w->r2, w->r2_kids, (span *[]){&w->s2}, 1);
  span *all[6] = {&w->c, &w->s, &w->r1, &w->s1, &w->r2, &w->s2};
  memcpy(w->spans, all, sizeof(all));
  w->roots[0] = &w->c;
  w->t = (trace){.spans = w->spans, .n_spans = 6, .roots = w->roots, .n_roots = 1,
                 .root_prob = prob};
}

/* Times at int64's extremes: a root over most of int64 (its duration
 * saturated) whose grandchild is the same hop as itself (one key met
 * twice in the trace). */
typedef struct far_trace {
  span root, call, again;
  span *spans[3], *roots[1], *root_kids[1], *call_kids[1];
  trace t;
} far_trace;

static inline void make_far(far_trace *f, uint64_t prob) {
  memset(f, 0, sizeof(*f));
  f->root = mk(1, 0, "osd.0", "op", HOP_KIND_SERVER, INT64_MIN + 1, INT64_MAX - 1);
  f->call = mk(2, 1, "osd.0", "op", HOP_KIND_CLIENT, INT64_MIN / 2, -2);
  f->again = mk(3, 2, "osd.0", "op", HOP_KIND_SERVER, INT64_MIN / 2 + 1, -3);
  link(&f->root, f->root_kids, (span *[]){&f->call}, 1);
  link(&f->call, f->call_kids, (span *[]){&f->again}, 1);
  f->spans[0] = &f->root;
  f->spans[1] = &f->call;
  f->spans[2] = &f->again;
  f->roots[0] = &f->root;
  f->t = (trace){.spans = f->spans, .n_spans = 3, .roots = f->roots, .n_roots = 1,
                 .root_prob = prob};
}

#endif
