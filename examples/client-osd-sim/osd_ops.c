/* The OSD's request path: a client write or delete is applied locally (on
 * a worker thread) while the replicas get it in parallel (sent from the
 * handler, so under the traced messenger each replica request is a child
 * of the client's request); the client is answered, from whichever thread
 * finishes last, once min_size copies are in. Reads and stats are served
 * by a worker. Replica requests are applied by a worker and answered
 * there.
 *
 * Never: sleep or touch the store on the loop thread; answer a request
 * twice or not at all; free an op while a callback may still see it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hoptrace/error.h"
#include "hoptrace/traced.h"
#include "osd.h"
#include "osd_repair.h"
#include "sim_proto.h"
#include "sim_truth.h"

/* A request kept beyond its handler: the message copy and the token. */
typedef struct held {
  osd *o;
  ht_request *req;
  ht_envelope *msg;
  sim_obj_req r;
  int is_delete;
  int want_data; /* reads and stats */
  /* client writes only: completion of local apply + replicas */
  atomic_int pending;
  atomic_int copies;
  atomic_int acked;  /* replicas that acknowledged */
  int planned;       /* replicas sent to (the set's size - 1) */
  int sampled;       /* its trace is recorded */
} held;

static held *hold(osd *o, ht_request *req, const ht_envelope *msg) {
  held *h = calloc(1, sizeof(*h));
  int status = HT_ENOMEM;
  if (h != NULL && ht_message_copy(msg, &h->msg) == 0) {
    if (sim_req_decode(h->msg->payload, h->msg->payload_len, &h->r) == 0) {
      h->o = o;
      h->req = req;
      return h;
    }
    status = HT_EINVAL; /* malformed payload */
    ht_message_free(h->msg);
  }
  free(h);
  ht_request_reply(req, status, NULL);
  return NULL;
}

static void release(held *h) {
  ht_message_free(h->msg);
  free(h);
}

/* A slow disk: every write, or slow_pct percent of them at random (each
 * written to the simulator's truth with its trace). */
static void slow_disk(const held *h) {
  static _Thread_local unsigned seed;
  const osd *o = h->o;
  if (o->slow_ms == 0)
    return;
  if (seed == 0)
    seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)&seed;
  if (o->slow_pct < 100 && (double)(rand_r(&seed) % 1000000) >= o->slow_pct * 10000.0)
    return;
  ht_trace_context t;
  if (ht_request_context(h->req, &t) == 0)
    sim_truth("slow_disk", &t, o->name, o->slow_ms);
  struct timespec ts = {o->slow_ms / 1000, (long)(o->slow_ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Worker thread: applies a write or delete; 0, or HT_EIO. */
static int apply(held *h) {
  slow_disk(h);
  int rc = h->is_delete ? sim_store_delete(h->o->store, h->r.name, h->r.name_len, h->r.version)
                        : sim_store_put(h->o->store, h->r.name, h->r.name_len, h->r.version,
                                        h->r.data, h->r.data_len);
  if (rc < 0)
    sim_log_printf(&h->o->log, HT_LOG_ERROR, "store: an object %s failed (answered EIO)",
                   h->is_delete ? "delete" : "write");
  if (rc == 1)
    atomic_fetch_add(&h->o->stale, 1);
  if (rc >= 0)
    osd_repair_applied(h->o, h->r.name, h->r.name_len);
  return rc < 0 ? HT_EIO : 0;
}

/* --- client write/delete at the primary */

/* What Ceph's OSD tagged its op with under Blkin, on the primary's span
 * (free when the write is not sampled). */
static void tag_write(held *h, unsigned pg, unsigned n) {
  char obj[SIM_NAME_MAX + 1], pgid[16];
  snprintf(obj, sizeof(obj), "%.*s", (int)h->r.name_len, h->r.name);
  snprintf(pgid, sizeof(pgid), "1.%x", pg);
  ht_request_kv_str(h->req, "sim.object", obj);
  ht_request_kv_str(h->req, "sim.pg", pgid);
  ht_request_kv_int(h->req, "sim.size", (int64_t)h->r.data_len);
  ht_request_kv_int(h->req, "sim.replicas", (int64_t)n - 1);
}

static void write_finish(held *h) {
  unsigned copies = (unsigned)atomic_load(&h->copies);
  int acked = atomic_load(&h->acked);
  if (acked < h->planned)
    atomic_fetch_add(&h->o->degraded, 1); /* acknowledged with fewer replicas */
  if (h->sampled)
    ht_request_kv_int(h->req, "sim.replicas_acked", acked);
  uint8_t buf[SIM_REPLY_HDR];
  sim_obj_reply r = {h->r.version, h->is_delete ? SIM_DELETED : SIM_PRESENT, NULL, 0};
  size_t n = sim_reply_encode(buf, sizeof(buf), &r);
  if (copies >= h->o->map.min_size)
    ht_request_reply(h->req, 0, &(ht_payload){buf, n, NULL, NULL});
  else
    ht_request_reply(h->req, HT_EIO, NULL);
  release(h);
}

static void write_part_done(held *h, int ok) {
  if (ok)
    atomic_fetch_add(&h->copies, 1);
  if (atomic_fetch_sub(&h->pending, 1) == 1)
    write_finish(h);
}

static void local_apply_job(void *arg) {
  held *h = arg;
  write_part_done(h, apply(h) == 0);
}

/* A replica send that failed, counted apart for sampled writes (each of
 * those must be an ERROR span in the write's trace). */
static void replica_failed(held *h, int status) {
  ht_trace_context t;
  if (sim_truth_on() && ht_request_context(h->req, &t) == 0)
    sim_truth("replica_failed", &t, h->o->name, status);
  atomic_fetch_add(&h->o->replica_failed, 1);
  if (h->sampled)
    atomic_fetch_add(&h->o->replica_failed_sampled, 1);
}

static void on_replica_reply(void *arg, int status, const ht_envelope *reply) {
  held *h = arg;
  (void)reply;
  if (status != 0)
    replica_failed(h, status);
  else
    atomic_fetch_add(&h->acked, 1);
  write_part_done(h, status == 0);
}

/* Position of this OSD in the object's set, or -1 (not ours). */
static int position(const osd *o, const held *h, unsigned *set, unsigned *n) {
  *n = sim_map_set(&o->map, sim_map_pg(&o->map, h->r.name, h->r.name_len), set);
  for (unsigned i = 0; i < *n; i++)
    if (set[i] == o->id)
      return (int)i;
  return -1;
}

static void on_client_mutation(osd *o, ht_request *req, const ht_envelope *msg, int is_delete) {
  held *h = hold(o, req, msg);
  if (h == NULL)
    return;
  h->is_delete = is_delete;
  atomic_fetch_add(&o->client_ops, 1);
  unsigned set[SIM_MAX_OSDS], n;
  ht_trace_context ctx;
  h->sampled = ht_request_context(req, &ctx) == 0 && (ctx.flags & HT_FLAG_SAMPLED);
  if (position(o, h, set, &n) < 0) {
    /* misdirected: not in the set. Name the first few senders (a client
     * with a stale map) without flooding the log. */
    if (atomic_fetch_add(&o->refused, 1) < 5)
      fprintf(stderr, "%s: refused %s from %s: not in the object's set\n",
              o->name, ht_request_operation(h->req), ht_request_peer(h->req));
    ht_request_reply(h->req, HT_EINVAL, NULL);
    release(h);
    return;
  }
  /* One count for the local apply, one per replica sent, one held by this
   * handler until every part is launched. */
  atomic_store(&h->pending, 2);
  h->planned = (int)n - 1;
  if (h->sampled)
    tag_write(h, sim_map_pg(&o->map, h->r.name, h->r.name_len), n);
  const char *op = is_delete ? SIM_OP_REPLICA_DELETE : SIM_OP_REPLICA_WRITE;
  ht_request_options ro;
  ht_request_options_init(&ro);
  ro.timeout_ms = o->replica_timeout_ms;
  for (unsigned i = 0; i < n; i++) {
    if (set[i] == o->id)
      continue;
    atomic_fetch_add(&h->pending, 1);
    ht_payload pl = {h->msg->payload, h->msg->payload_len, NULL, NULL};
    int rc = ht_peer_request(o->peers[set[i]], op, &pl, &ro, on_replica_reply, h);
    if (rc != 0) {
      replica_failed(h, rc); /* refused at once: a span all the same */
      atomic_fetch_sub(&h->pending, 1); /* never called back */
    }
  }
  if (sim_workers_submit(o->workers, local_apply_job, h) != 0)
    write_part_done(h, 0);
  write_part_done(h, 0); /* the handler's own count: adds no copy */
}

static void on_write(void *arg, ht_request *req, const ht_envelope *msg) {
  on_client_mutation(arg, req, msg, 0);
}

static void on_delete(void *arg, ht_request *req, const ht_envelope *msg) {
  on_client_mutation(arg, req, msg, 1);
}

/* --- replica side */

static void replica_job(void *arg) {
  held *h = arg;
  ht_request_reply(h->req, apply(h), NULL);
  release(h);
}

static void on_replica(osd *o, ht_request *req, const ht_envelope *msg, int is_delete) {
  held *h = hold(o, req, msg);
  if (h == NULL)
    return;
  h->is_delete = is_delete;
  atomic_fetch_add(&o->replica_ops, 1);
  if (sim_workers_submit(o->workers, replica_job, h) != 0) {
    ht_request_reply(h->req, HT_ENOMEM, NULL);
    release(h);
  }
}

static void on_replica_write(void *arg, ht_request *req, const ht_envelope *msg) {
  on_replica(arg, req, msg, 0);
}

static void on_replica_delete(void *arg, ht_request *req, const ht_envelope *msg) {
  on_replica(arg, req, msg, 1);
}

/* --- reads and stats (served by whichever set member the client asks) */

static void lookup_job(held *h, int want_data) {
  uint64_t version;
  int state;
  uint8_t *data = NULL;
  size_t len = 0;
  if (sim_store_get(h->o->store, h->r.name, h->r.name_len, want_data, &version, &state,
                    &data, &len) != 0) {
    sim_log_printf(&h->o->log, HT_LOG_ERROR, "store: an object read failed (answered EIO)");
    ht_request_reply(h->req, HT_EIO, NULL);
    release(h);
    return;
  }
  if (want_data && len > 0 && h->o->corrupt_every > 0 &&
      atomic_fetch_add(&h->o->reads, 1) % h->o->corrupt_every == h->o->corrupt_every - 1)
    data[len / 2] ^= 0x5a; /* --corrupt-reads: the client must notice */
  sim_obj_reply r = {version, state, data, want_data ? len : 0};
  size_t cap = SIM_REPLY_HDR + r.data_len;
  uint8_t *buf = malloc(cap);
  if (buf == NULL) {
    ht_request_reply(h->req, HT_ENOMEM, NULL);
  } else {
    size_t n = sim_reply_encode(buf, cap, &r);
    ht_request_reply(h->req, 0, &(ht_payload){buf, n, NULL, NULL}); /* copied */
  }
  free(buf);
  free(data);
  release(h);
}

static void read_job(void *arg) {
  lookup_job(arg, 1);
}

static void stat_job(void *arg) {
  lookup_job(arg, 0);
}

/* After a read-repair (worker thread), or when it failed (any thread). */
static void lookup_after_repair(void *arg, int ok) {
  held *h = arg;
  if (ok) {
    lookup_job(h, h->want_data);
    return;
  }
  ht_request_reply(h->req, HT_EAGAIN, NULL); /* too few peers to trust our copy */
  release(h);
}

static void on_lookup(osd *o, ht_request *req, const ht_envelope *msg, sim_job_fn job) {
  held *h = hold(o, req, msg);
  if (h == NULL)
    return;
  atomic_fetch_add(&o->client_ops, 1);
  h->want_data = job == read_job;
  if (osd_repair_needed(o, h->r.name, h->r.name_len)) {
    osd_repair_start(o, h->r.name, h->r.name_len, lookup_after_repair, h);
    return;
  }
  if (sim_workers_submit(o->workers, job, h) != 0) {
    ht_request_reply(h->req, HT_ENOMEM, NULL);
    release(h);
  }
}

static void on_read(void *arg, ht_request *req, const ht_envelope *msg) {
  on_lookup(arg, req, msg, read_job);
}

static void on_stat(void *arg, ht_request *req, const ht_envelope *msg) {
  on_lookup(arg, req, msg, stat_job);
}

int osd_handlers_register(osd *o) {
  static const struct {
    const char *op;
    ht_handler_fn fn;
  } table[] = {{SIM_OP_WRITE, on_write},
               {SIM_OP_DELETE, on_delete},
               {SIM_OP_READ, on_read},
               {SIM_OP_STAT, on_stat},
               {SIM_OP_REPLICA_WRITE, on_replica_write},
               {SIM_OP_REPLICA_DELETE, on_replica_delete}};
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
    int rc = ht_messenger_handle(o->m, table[i].op, table[i].fn, o);
    if (rc != 0)
      return rc;
  }
  return osd_repair_register(o);
}
