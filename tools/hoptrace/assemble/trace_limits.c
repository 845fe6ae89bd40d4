#include "assemble/trace_limits.h"

int trace_limit_tags(span_mem *mem, trace *t) {
  span *root = t->n_roots > 0 ? t->roots[0] : NULL;
  if (root == NULL)
    return 0;
  if (t->dropped_spans > 0 &&
      span_add_tag(mem, t, root, "hoptrace.limit.dropped_spans", true, t->dropped_spans,
                   NULL) != 0)
    return -1;
  if (t->strings_cut > 0 &&
      span_add_tag(mem, t, root, "hoptrace.limit.strings_cut", true, t->strings_cut, NULL) != 0)
    return -1;
  if (t->written_early && t->timed_out &&
      span_add_tag(mem, t, root, "hoptrace.limit.written_early", false, 0,
                   "too many traces open at once (--max-open-traces, --max-open-spans)") != 0)
    return -1;
  return 0;
}
