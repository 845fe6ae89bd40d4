/* Coalescing, rate limit and counts of the flight recorder's snapshots
 * (flight_policy.h). */
#include "cli/flight_policy.h"

void fl_policy_init(fl_policy *p, int64_t coalesce_ns, double rate, int64_t max_defer_ns) {
  *p = (fl_policy){.coalesce_ns = coalesce_ns, .max_defer_ns = max_defer_ns};
  p->min_gap_ns = (int64_t)(1e9 / rate);
  p->next_start_ns = INT64_MIN;
}

int fl_policy_trigger(fl_policy *p, int64_t now) {
  p->fired++;
  if (p->pending) {
    p->open.triggers++;
    if (p->open.due_ns - now > p->coalesce_ns)
      p->open.rate_limited++;
    return FL_JOINED;
  }
  int64_t due = now + p->coalesce_ns;
  int limited = p->next_start_ns > due;
  if (limited)
    due = p->next_start_ns;
  if (due - now > p->max_defer_ns) {
    p->dropped++;
    return FL_DROPPED;
  }
  p->pending = 1;
  p->open = (fl_batch){.first_ns = now, .due_ns = due, .triggers = 1,
                       .rate_limited = (uint64_t)limited};
  return FL_OPENED;
}

int fl_policy_ready(const fl_policy *p, int64_t now, int64_t *wait_ns) {
  *wait_ns = 0;
  if (!p->pending || p->busy)
    return 0;
  if (now >= p->open.due_ns)
    return 1;
  *wait_ns = p->open.due_ns - now;
  return 0;
}

fl_batch fl_policy_start(fl_policy *p, int64_t now) {
  fl_batch b = p->open;
  p->pending = 0;
  p->busy = 1;
  p->next_start_ns = now + p->min_gap_ns;
  return b;
}

void fl_policy_done(fl_policy *p, const fl_batch *b, int ok) {
  p->busy = 0;
  if (ok) {
    p->snapshots++;
    p->coalesced += b->triggers - 1;
    p->rate_limited += b->rate_limited;
  } else {
    p->failures++;
    p->dropped += b->triggers;
  }
}

void fl_policy_abandon(fl_policy *p) {
  if (!p->pending)
    return;
  p->pending = 0;
  p->dropped += p->open.triggers;
}
