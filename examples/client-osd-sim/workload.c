/* The client's operations: choose an object and an operation, send it to
 * the first live OSD of the object's set, and check the answer against
 * what this client last wrote (read-your-writes).
 *
 * Versions: each write or delete carries the next version of its object;
 * OSDs never apply an older version over a newer one. An acknowledged
 * version is the floor: a later read must return the floor or a newer
 * version sent by an operation that failed (it may have landed), never
 * anything older, and its bytes must be exactly those of that version.
 *
 * Never: block; issue on a busy object; treat a failure as a success. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "hoptrace/error.h"
#include "hoptrace/span.h"
#include "hoptrace/traced.h"
#include "sim_proto.h"
#include "sim_truth.h"

typedef struct op {
  client *c;
  uint64_t seq; /* issue order, for the exactly-once check */
  int kind;
  unsigned obj;
  uint64_t version;
  uint32_t len;
  uint64_t start_ns;
  /* --failover: the request kept for another attempt, the object's set
   * and the next member to try, the call's span (A72: its attempts are
   * the traced messenger's client spans, children of it) */
  uint8_t *buf;
  size_t n;
  unsigned set[SIM_MAX_OSDS], nset, next;
  ht_span call;
} op;

static const char *const op_names[OP_KINDS] = {SIM_OP_WRITE, SIM_OP_READ, SIM_OP_STAT,
                                                SIM_OP_DELETE};

uint64_t client_rand(client *c, uint64_t n) {
  uint64_t x = c->rng; /* xorshift64* */
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  c->rng = x;
  return n ? (x * 0x2545f4914f6cdd1dull >> 11) % n : 0;
}

static void obj_name(const client *c, unsigned obj, char *buf, size_t cap) {
  snprintf(buf, cap, "c%u.obj.%u", c->cfg.id, obj);
}

static int pick_kind(client *c) {
  unsigned r = (unsigned)client_rand(c, 100);
  if (r < c->cfg.read_pct)
    return OP_READ;
  r -= c->cfg.read_pct;
  if (r < c->cfg.stat_pct)
    return OP_STAT;
  r -= c->cfg.stat_pct;
  return r < c->cfg.delete_pct ? OP_DELETE : OP_WRITE;
}

/* Sizes spread over powers of two between size_min and size_max. */
static uint32_t pick_size(client *c) {
  uint32_t lo = c->cfg.size_min, hi = c->cfg.size_max;
  uint32_t top = lo;
  while (top < hi && client_rand(c, 2))
    top = top * 2 > hi ? hi : top * 2;
  return lo + (uint32_t)client_rand(c, top - lo + 1);
}

/* The first live member of the object's set, or NULL. */
static ht_peer *target(client *c, const char *name) {
  unsigned set[SIM_MAX_OSDS];
  unsigned n = sim_map_set(&c->map, sim_map_pg(&c->map, name, strlen(name)), set);
  for (unsigned i = 0; i < n; i++) {
    ht_peer *p = c->peers[set[i]];
    if (p != NULL && ht_peer_connected(p))
      return p;
  }
  return NULL;
}

static void count_error(client *c, int status, const ht_envelope *reply) {
  if (status == HT_ETIMEDOUT)
    c->st.timeouts++;
  else if (status == HT_ECONNRESET || status == HT_ENOTCONN || status == HT_ECLOSED)
    c->st.conn_errors++;
  else if (status == HT_EPEERERROR)
    c->st.peer_errors++;
  else
    c->st.other_errors++;
  (void)reply;
}

static void verify_fail(client *c, const op *o, const char *why, uint64_t got) {
  char name[64];
  obj_name(c, o->obj, name, sizeof(name));
  c->st.verify_failures++;
  if (c->st.verify_failures <= 10)
    fprintf(stderr, "%s: VERIFY FAILED %s %s: %s (got v%" PRIu64 ", floor v%" PRIu64
                    ", issued v%" PRIu64 ")\n",
            c->name, op_names[o->kind], name, why, got, c->objs[o->obj].floor,
            c->objs[o->obj].issued);
}

/* A read or stat answer against what this client knows of the object. */
static void verify_lookup(client *c, const op *o, const sim_obj_reply *r) {
  const obj_state *s = &c->objs[o->obj];
  char name[64];
  obj_name(c, o->obj, name, sizeof(name));
  if (r->version < s->floor)
    return verify_fail(c, o, "older than the last acknowledged write", r->version);
  if (r->version > s->issued)
    return verify_fail(c, o, "version never written", r->version);
  if (r->version == s->floor) {
    int want = s->floor == 0 ? SIM_ABSENT : s->floor_state;
    if (r->state != want)
      return verify_fail(c, o, "wrong existence state", r->version);
  } else {
    c->st.uncertain_seen++; /* a failed write that landed after all */
  }
  if (o->kind == OP_READ && r->state == SIM_PRESENT) {
    if (r->version == s->floor && r->data_len != s->floor_len)
      return verify_fail(c, o, "wrong length", r->version);
    if (!sim_check(r->data, r->data_len, name, r->version))
      return verify_fail(c, o, "wrong content", r->version);
  }
  c->st.verified++;
}

static void settle(client *c, op *o, int status, const ht_envelope *reply) {
  obj_state *s = &c->objs[o->obj];
  sim_obj_reply r;
  if (status == 0 && sim_reply_decode(reply->payload, reply->payload_len, &r) != 0) {
    verify_fail(c, o, "malformed reply", 0);
    status = HT_EMALFORMED;
  }
  if (status != 0) {
    c->st.failed[o->kind]++;
    if (status != HT_EMALFORMED)
      count_error(c, status, reply);
    return;
  }
  c->st.ok[o->kind]++;
  uint64_t ns = sim_now_ns() - o->start_ns;
  sim_latency_add(&c->st.lat[o->kind], ns);
  sim_latency_add(&c->st.all, ns);
  if (o->kind == OP_READ || o->kind == OP_STAT) {
    verify_lookup(c, o, &r);
  } else if (r.version != o->version) {
    verify_fail(c, o, "acknowledged a different version", r.version);
  } else if (o->version > s->floor) {
    s->floor = o->version;
    s->floor_state = o->kind == OP_WRITE ? SIM_PRESENT : SIM_DELETED;
    s->floor_len = o->len;
  }
}

int client_settle(client *c, uint64_t seq) {
  if (seq >= c->st.settled_cap) {
    uint64_t cap = c->st.settled_cap ? c->st.settled_cap * 2 : 65536;
    while (cap <= seq)
      cap *= 2;
    uint8_t *p = realloc(c->st.settled, cap);
    if (p == NULL)
      return -1;
    memset(p + c->st.settled_cap, 0, cap - c->st.settled_cap);
    c->st.settled = p;
    c->st.settled_cap = cap;
  }
  if (c->st.settled[seq])
    c->st.duplicates++;
  c->st.settled[seq] = 1;
  return 0;
}

uint64_t client_unsettled(const client *c) {
  uint64_t n = 0;
  for (uint64_t i = 0; i < c->issued; i++)
    n += i >= c->st.settled_cap || !c->st.settled[i];
  return n;
}

static int attempt(client *c, op *o);

/* --failover: the call ends (its span with the outcome), the op freed. */
static void call_end(op *o, int status) {
  if (status != 0)
    ht_span_set_error(&o->call, status, ht_strerror(status));
  ht_span_finish(&o->call);
  free(o->buf);
  free(o);
}

/* A failure worth another OSD: one that never reached the OSD, or, for
 * a read or stat (no side effects), a connection lost under it. */
static int retryable(const op *o, int status) {
  if (status == HT_ENOTCONN || status == HT_ECLOSED || status == HT_EQUEUEFULL)
    return 1;
  return (o->kind == OP_READ || o->kind == OP_STAT) && status == HT_ECONNRESET;
}

/* The simulator's own log (sim_truth.h): a failed attempt or op, or one
 * slower than the truth's threshold, with its trace (the call's under
 * --failover, else the reply's, if any). */
static void truth_of(const client *c, const op *o, int status, const ht_envelope *reply) {
  const ht_trace_context *t = c->cfg.failover ? &o->call.ctx
                              : reply != NULL && reply->has_trace ? &reply->trace
                                                                  : NULL;
  uint64_t ns = sim_now_ns() - o->start_ns, slow = sim_truth_slow_ns();
  if (status == HT_EPEERERROR && reply != NULL)
    status = reply->status;
  if (status != 0)
    sim_truth("failed", t, c->name, status);
  else if (slow != 0 && ns > slow)
    sim_truth("slow", t, c->name, (long long)ns);
}

static void on_reply(void *arg, int status, const ht_envelope *reply) {
  op *o = arg;
  client *c = o->c;
  if (sim_truth_on())
    truth_of(c, o, status, reply);
  if (c->cfg.failover && status != 0 && retryable(o, status) && o->next < o->nset) {
    c->st.attempts_failed++;
    if (attempt(c, o) == 0)
      return; /* another OSD has it */
  }
  if (c->cfg.failover && status == 0 && o->next > 1)
    c->st.failed_over++;
  client_settle(c, o->seq);
  settle(c, o, status, reply);
  c->objs[o->obj].busy = 0;
  c->inflight--;
  if (c->cfg.failover)
    call_end(o, status);
  else
    free(o);
  workload_fill(c);
}

/* --failover: the next members of the set in turn, under the call's
 * span, until one takes the request. 0, or the last refusal (or
 * HT_ENOTCONN when no member is left). */
static int attempt(client *c, op *o) {
  int rc = HT_ENOTCONN;
  while (o->next < o->nset) {
    ht_peer *p = c->peers[o->set[o->next++]];
    if (p == NULL)
      continue; /* being replaced */
    ht_payload pl = {o->buf, o->n, NULL, NULL}; /* copied: kept for a retry */
    ht_request_options ro;
    ht_request_options_init(&ro);
    ro.timeout_ms = c->cfg.timeout_ms;
    ht_trace_context prev = ht_context_restore(&o->call.ctx);
    rc = ht_peer_request(p, op_names[o->kind], &pl, &ro, on_reply, o);
    ht_context_restore(&prev);
    if (rc == 0)
      return 0;
    sim_truth("failed", &o->call.ctx, c->name, rc);
    if (o->next < o->nset)
      c->st.attempts_failed++; /* refused at once: the next one */
  }
  return rc;
}

static void free_payload(void *arg, int status) {
  (void)status;
  free(arg);
}

/* A free object: a random start, then the next free one. */
static int pick_object(client *c, unsigned *obj) {
  unsigned start = (unsigned)client_rand(c, c->cfg.objects);
  for (unsigned i = 0; i < c->cfg.objects; i++) {
    unsigned k = (start + i) % c->cfg.objects;
    if (!c->objs[k].busy) {
      *obj = k;
      return 0;
    }
  }
  return -1;
}

/* --failover: the call's span (a root: the sampler decides), then the
 * set in order. */
static int issue_failover(client *c, op *o, const char *name, uint8_t *buf, size_t n) {
  obj_state *s = &c->objs[o->obj];
  int mutation = o->kind == OP_WRITE || o->kind == OP_DELETE;
  o->buf = buf;
  o->n = n;
  o->nset = sim_map_set(&c->map, sim_map_pg(&c->map, name, strlen(name)), o->set);
  o->next = 0;
  ht_span_info info = {op_names[o->kind], HT_SPAN_INTERNAL, c->name, ""};
  ht_span_init(&o->call);
  ht_span_start_root(&o->call, &info, HT_SAMPLE_DEFAULT);
  if (ht_span_is_sampled(&o->call)) {
    char id[48];
    snprintf(id, sizeof(id), "%s.%llu", c->name, (unsigned long long)o->seq);
    ht_span_kv_str(&o->call, "sim.op_id", id);
    ht_span_kv_str(&o->call, "sim.object", name);
  }
  o->start_ns = sim_now_ns();
  if (mutation)
    s->issued = o->version; /* from here on it may land */
  int rc = attempt(c, o);
  if (rc != 0) {
    client_settle(c, o->seq); /* failed at once: settled here, never called back */
    if (mutation)
      s->issued = o->version - 1; /* never sent */
    c->st.failed[o->kind]++;
    count_error(c, rc, NULL);
    call_end(o, rc);
    return 0;
  }
  s->busy = 1;
  c->inflight++;
  return 0;
}

static int issue_one(client *c) {
  op *o = calloc(1, sizeof(*o));
  char name[64];
  if (o == NULL || pick_object(c, &o->obj) != 0) {
    free(o);
    return -1;
  }
  o->c = c;
  o->kind = pick_kind(c);
  obj_name(c, o->obj, name, sizeof(name));
  obj_state *s = &c->objs[o->obj];
  int mutation = o->kind == OP_WRITE || o->kind == OP_DELETE;
  o->version = mutation ? s->issued + 1 : 0;
  o->len = o->kind == OP_WRITE ? pick_size(c) : 0;
  size_t cap = SIM_REQ_HDR + strlen(name) + o->len;
  uint8_t *buf = malloc(cap);
  if (buf == NULL) {
    free(o);
    return -1;
  }
  if (o->len > 0)
    sim_fill(buf + SIM_REQ_HDR + strlen(name), o->len, name, o->version);
  sim_obj_req req = {o->version, name, strlen(name), NULL, 0};
  size_t n = sim_req_encode(buf, cap, &req) + o->len; /* data filled in place */
  o->seq = c->issued++;
  if (c->cfg.failover)
    return issue_failover(c, o, name, buf, n);
  ht_peer *p = target(c, name);
  int rc = HT_ENOTCONN;
  if (p != NULL) {
    ht_payload pl = {buf, n, free_payload, buf};
    ht_request_options ro;
    ht_request_options_init(&ro);
    ro.timeout_ms = c->cfg.timeout_ms;
    o->start_ns = sim_now_ns();
    if (mutation)
      s->issued = o->version; /* from here on it may land */
    rc = ht_peer_request(p, op_names[o->kind], &pl, &ro, on_reply, o);
  } else {
    c->st.no_osd++;
  }
  if (rc != 0) {
    client_settle(c, o->seq); /* failed at once: settled here, never called back */
    if (mutation && p != NULL)
      s->issued = o->version - 1; /* never sent */
    c->st.failed[o->kind]++;
    if (p != NULL)
      count_error(c, rc, NULL);
    free(buf);
    free(o);
    return 0; /* counted; the schedule moves on */
  }
  s->busy = 1;
  c->inflight++;
  return 0;
}

void workload_fill(client *c) {
  if (c->stopping)
    return;
  uint64_t now = sim_now_ns();
  if (now >= c->end_ns) {
    c->stopping = 1;
    return;
  }
  uint64_t due = UINT64_MAX;
  if (c->cfg.rate > 0)
    due = (uint64_t)((double)(now - c->start_ns) / 1e9 * c->cfg.rate) + 1;
  while (c->inflight < c->cfg.inflight && c->issued < due && !c->stopping) {
    uint64_t before = c->inflight;
    if (issue_one(c) != 0 || c->inflight == before)
      break; /* nothing could be sent: retry on the next reply or tick */
  }
}
