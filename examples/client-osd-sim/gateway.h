/* sim-gateway's parts: the OSD side (gateway_osd.c: the traced messenger
 * and one blocking call per object operation), the trace headers
 * (gateway_ctx.c: traceparent / b3 into the server span's parent) and the
 * HTTP side (gateway_http.c: libmicrohttpd, one thread per connection).
 *
 * Threads: each HTTP connection's thread runs its request start to end,
 * waiting for the OSD's reply; the messenger runs on its own thread. The
 * counters are atomics, read once at exit.
 *
 * Never: wait without a bound (every OSD call ends by the messenger's
 * request timeout), trust a header or a path before checking it. */
#ifndef SIM_GATEWAY_H
#define SIM_GATEWAY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster_map.h"
#include "hoptrace/messenger.h"
#include "hoptrace/span.h"
#include "sim_common.h"

typedef struct gw_stats {
  atomic_uint_fast64_t requests, status_2xx, status_4xx, status_5xx;
  atomic_uint_fast64_t from_traceparent, from_b3, roots;
  atomic_uint_fast64_t bad_traceparent, bad_b3, too_large;
} gw_stats;

/* --- OSD side */

typedef struct gw_osd {
  sim_map map;
  ht_messenger *m;
  ht_peer *peers[SIM_MAX_OSDS];
  uint32_t timeout_ms;
  atomic_uint_fast64_t version; /* last version given to a mutation */
} gw_osd;

/* Builds the messenger (own thread), connects to every OSD of the map
 * and waits up to 5 s for them. 0, or -1 with a message printed. */
int gw_osd_open(gw_osd *g, const sim_common_opts *o, const char *name, sim_log *log);

/* One object operation (SIM_OP_WRITE / READ / DELETE) to the first live
 * OSD of the object's set, sent from the calling thread (its current
 * context is the parent of the request's span), waiting for the answer.
 * Returns 0 with *reply (free with ht_message_free) or a negative HT_E*
 * status (HT_ENOTCONN: no live OSD). */
int gw_osd_call(gw_osd *g, const char *op, const char *name, const void *data, size_t len,
                ht_envelope **reply);

/* The version of the next write or delete: above every earlier one, also
 * across restarts (it starts at the wall clock in nanoseconds). */
uint64_t gw_osd_next_version(gw_osd *g);

/* Closes the messenger (after the HTTP side stopped: nobody waits). */
void gw_osd_close(gw_osd *g);

/* --- trace headers */

/* Where a request's server span comes from. */
typedef enum gw_parent { GW_ROOT = 0, GW_TRACEPARENT, GW_B3 } gw_parent;

/* Starts the server span of a request from its header values (NULL when
 * absent; `n_traceparent` how many traceparent fields it had): a valid
 * traceparent continues that trace, else (none at all) a valid b3; a
 * malformed one, or several traceparent fields, starts a new root and is
 * counted. Returns where the parent came from. */
gw_parent gw_span_start(ht_span *span, const ht_span_info *info, const char *traceparent,
                        unsigned n_traceparent, const char *b3, gw_stats *st);

/* --- HTTP side */

typedef struct gw_http_cfg {
  const char *bind;      /* IPv4 address, default 127.0.0.1 */
  unsigned port;         /* 0: any */
  size_t max_body;       /* bytes of a PUT body */
  unsigned max_conns;    /* HTTP connections at once */
  unsigned idle_timeout; /* seconds an idle connection is kept */
  const char *service;   /* the server spans' service name */
  sim_log *log;          /* libmicrohttpd's messages go there */
} gw_http_cfg;

typedef struct gw_http gw_http;

/* Starts serving; *port receives the bound port. Called on the main
 * thread: the connection threads take its name (procname filters). 0, or
 * -1 with a message printed. */
int gw_http_start(gw_http **out, const gw_http_cfg *cfg, gw_osd *osd, gw_stats *st,
                  unsigned *port);

/* Stops accepting, waits for the running requests (each bounded by the
 * OSD timeout), frees everything. */
void gw_http_stop(gw_http *h);

#endif
