/* The workload generator's state, shared by client.c (process, loop,
 * timers, faults) and workload.c (operations and verification).
 * Everything runs on one thread: the client's own libuv loop, which the
 * messenger also runs on (opts.loop), so nothing here is locked.
 * Never: issue two operations on one object at a time (verification
 * relies on it). */
#ifndef SIM_CLIENT_H
#define SIM_CLIENT_H

#include <stdint.h>
#include <uv.h>

#include "cluster_map.h"
#include "hoptrace/messenger.h"
#include "latency.h"
#include "sim_common.h"

enum { OP_WRITE, OP_READ, OP_STAT, OP_DELETE, OP_KINDS };

typedef struct obj_state {
  uint64_t floor;      /* last version acknowledged (0: none) */
  int floor_state;     /* SIM_ABSENT / PRESENT / DELETED at floor */
  uint32_t floor_len;  /* size at floor when present */
  uint64_t issued;     /* highest version sent (acked or not) */
  int busy;
} obj_state;

typedef struct client_cfg {
  unsigned id;
  const char *map_path;
  double duration_s;
  unsigned inflight;
  double rate;          /* ops/s; 0: closed loop */
  unsigned objects;
  unsigned read_pct, stat_pct, delete_pct;
  unsigned size_min, size_max;
  uint32_t timeout_ms;
  uint32_t drop_conn_ms; /* 0: never */
  const char *ratio_at;  /* "SEC:RATIO,..." */
  uint64_t seed;
  double max_failed_pct; /* exit 1 above this share of failed ops */
  int failover;          /* try the set in order (workload.c) */
} client_cfg;

typedef struct client_stats {
  uint64_t ok[OP_KINDS], failed[OP_KINDS];
  uint64_t timeouts, conn_errors, peer_errors, other_errors, no_osd;
  uint64_t verified, verify_failures, uncertain_seen, drops;
  uint64_t attempts_failed, failed_over; /* --failover: attempts that failed,
                                            calls answered by a later attempt */
  /* exactly-once accounting: one byte per issued operation, set when it
   * is settled (answered or failed); a second settle is a duplicate */
  uint8_t *settled;
  uint64_t settled_cap, duplicates;
  sim_latency lat[OP_KINDS], all;
} client_stats;

typedef struct client {
  client_cfg cfg;
  char name[32];
  sim_map map;
  uv_loop_t loop;
  uv_timer_t tick;
  ht_messenger *m;
  ht_peer *peers[SIM_MAX_OSDS]; /* NULL while being replaced */
  obj_state *objs;
  uint64_t rng;
  uint64_t start_ns, end_ns, issued, inflight;
  int stopping;
  client_stats st;
  sim_log log;
} client;

/* Issues operations until inflight (or, in rate mode, the schedule) is
 * satisfied. Loop thread. */
void workload_fill(client *c);

/* Records that operation seq (0-based issue order) is settled; counts a
 * duplicate when it already was. 0, or -1 (out of memory). */
int client_settle(client *c, uint64_t seq);

/* Operations issued and never settled (reported at the end). */
uint64_t client_unsettled(const client *c);

/* Random number in [0, n). */
uint64_t client_rand(client *c, uint64_t n);

#endif
