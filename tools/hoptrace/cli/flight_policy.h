/* When the flight recorder snapshots: triggers coalesced into one
 * pending snapshot, snapshot starts rate-limited per host, triggers that
 * would wait too long dropped, every trigger counted exactly once. Pure
 * logic over times the caller passes (ns, one monotonic clock): no
 * clock, thread or LTTng here.
 *
 * A trigger with no snapshot pending opens one, due after the coalescing
 * window or when the rate limit next allows one (starts at least 1/R s
 * apart: a token bucket of one token), whichever is later; when that is
 * more than max_defer away it is dropped instead. Triggers arriving while
 * one is pending join it (coalesced). One started (being written) takes
 * no more: a trigger then opens the next. A trigger is rate-limited when
 * the limit, not the window, set how long it waited. When a snapshot
 * ends: written, its first trigger and its coalesced ones count as
 * captured; failed, or still pending when snapshots are given up, all of
 * its triggers count as dropped. So, once nothing is pending or being
 * written:
 *   fired = snapshots + coalesced + dropped. */
#ifndef HT_TOOL_FLIGHT_POLICY_H
#define HT_TOOL_FLIGHT_POLICY_H

#include <stdint.h>

typedef struct fl_batch {
  int64_t first_ns;      /* the first trigger's arrival */
  int64_t due_ns;        /* when it may start */
  uint64_t triggers;     /* triggers it holds (the first included) */
  uint64_t rate_limited; /* of which delayed by the rate limit */
} fl_batch;

typedef struct fl_policy {
  int64_t coalesce_ns, min_gap_ns, max_defer_ns;
  int64_t next_start_ns; /* the earliest the next snapshot may start */
  int pending;           /* a batch collects triggers */
  int busy;              /* a batch is being written */
  fl_batch open;
  uint64_t fired, snapshots, coalesced, rate_limited, dropped, failures;
} fl_policy;

/* rate: snapshots a second (> 0). */
void fl_policy_init(fl_policy *p, int64_t coalesce_ns, double rate, int64_t max_defer_ns);

enum { FL_DROPPED = 0, FL_OPENED = 1, FL_JOINED = 2 };

/* A trigger arrived at now: dropped, opened the pending batch, or joined
 * it. */
int fl_policy_trigger(fl_policy *p, int64_t now);

/* 1 when the pending batch may start at now (nothing being written);
 * else 0 and, when one is pending, *wait_ns until it is due (0 while the
 * one being written runs). */
int fl_policy_ready(const fl_policy *p, int64_t now, int64_t *wait_ns);

/* Starts the pending batch (fl_policy_ready said 1): it takes no more
 * triggers and the next start is at least 1/R s after now. */
fl_batch fl_policy_start(fl_policy *p, int64_t now);

/* The batch started last ended: written (ok) or not. */
void fl_policy_done(fl_policy *p, const fl_batch *b, int ok);

/* No snapshot will be taken any more (the daemon stopped answering and
 * the snapshot thread was given up): a batch still pending never starts,
 * its triggers count as dropped. */
void fl_policy_abandon(fl_policy *p);

#endif
