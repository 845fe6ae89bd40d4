/* Read-repair of a restarted OSD (see osd_repair.h): the set of objects
 * verified since start, the pull of an object from the other members of
 * its set, and the peer side (osd_pull, osd_peer_check).
 *
 * Writes verify an object only once every peer has confirmed that its
 * connection back to this OSD is up ("settled"): before that a primary
 * whose connection to us was still reconnecting may have acknowledged a
 * later write without us (it counts as a failed replica send there).
 *
 * Never: answer from a copy that was not checked against the peers; keep
 * a repair or its buffers past its last callback. */
#include "osd_repair.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hoptrace/error.h"
#include "sim_proto.h"

#define VBUCKETS 4096

typedef struct vnode {
  struct vnode *next;
  size_t len;
  char name[];
} vnode;

struct check_ctx {
  osd *o;
  unsigned peer;
};

struct osd_recovery {
  pthread_mutex_t lock;
  struct check_ctx ctx[SIM_MAX_OSDS]; /* reply callbacks' argument, per peer */
  vnode *buckets[VBUCKETS];
  atomic_int settled;
  atomic_int confirmed[SIM_MAX_OSDS];
  atomic_int checking[SIM_MAX_OSDS];
};

int osd_repair_init(osd *o, int recovering) {
  if (!recovering)
    return 0;
  if ((o->rec = calloc(1, sizeof(*o->rec))) == NULL)
    return -1;
  pthread_mutex_init(&o->rec->lock, NULL);
  return 0;
}

void osd_repair_free(osd *o) {
  if (o->rec == NULL)
    return;
  for (size_t i = 0; i < VBUCKETS; i++) {
    for (vnode *v = o->rec->buckets[i], *next; v != NULL; v = next) {
      next = v->next;
      free(v);
    }
  }
  pthread_mutex_destroy(&o->rec->lock);
  free(o->rec);
  o->rec = NULL;
}

/* The slot where name is or would be linked; caller holds the lock. */
static vnode **vslot(struct osd_recovery *r, const char *name, size_t len) {
  vnode **p = &r->buckets[sim_hash(name, len, 0) % VBUCKETS];
  while (*p != NULL && ((*p)->len != len || memcmp((*p)->name, name, len) != 0))
    p = &(*p)->next;
  return p;
}

int osd_repair_needed(osd *o, const char *name, size_t name_len) {
  if (o->rec == NULL)
    return 0;
  pthread_mutex_lock(&o->rec->lock);
  int found = *vslot(o->rec, name, name_len) != NULL;
  pthread_mutex_unlock(&o->rec->lock);
  return !found;
}

static void mark_verified(osd *o, const char *name, size_t name_len) {
  pthread_mutex_lock(&o->rec->lock);
  vnode **p = vslot(o->rec, name, name_len);
  if (*p == NULL && (*p = calloc(1, sizeof(vnode) + name_len)) != NULL) {
    (*p)->len = name_len;
    memcpy((*p)->name, name, name_len);
  } /* out of memory: stays unverified, the next read repairs again */
  pthread_mutex_unlock(&o->rec->lock);
}

void osd_repair_applied(osd *o, const char *name, size_t name_len) {
  if (o->rec != NULL && atomic_load(&o->rec->settled))
    mark_verified(o, name, name_len);
}

/* --- the pull: one repair of one object */

typedef struct repair {
  osd *o;
  void (*then)(void *arg, int ok);
  void *arg;
  int pending; /* loop thread only */
  unsigned answers, need;
  uint64_t version;
  int state;
  uint8_t *data;
  size_t len;
  size_t name_len;
  char name[];
} repair;

static void repair_free(repair *r) {
  free(r->data);
  free(r);
}

/* Worker thread: store the newest copy (the store ignores it when ours is
 * newer: a write may have landed meanwhile), then let the caller answer. */
static void adopt_job(void *arg) {
  repair *r = arg;
  osd *o = r->o;
  int rc = 0;
  if (r->state == SIM_PRESENT)
    rc = sim_store_put(o->store, r->name, r->name_len, r->version, r->data, r->len);
  else if (r->state == SIM_DELETED)
    rc = sim_store_delete(o->store, r->name, r->name_len, r->version);
  if (rc == 0 && r->state != SIM_ABSENT)
    atomic_fetch_add(&o->repaired, 1);
  if (rc >= 0)
    mark_verified(o, r->name, r->name_len);
  else
    atomic_fetch_add(&o->repair_failed, 1);
  r->then(r->arg, rc >= 0);
  repair_free(r);
}

static void repair_part_done(repair *r) {
  if (--r->pending > 0)
    return;
  if (r->answers >= r->need && sim_workers_submit(r->o->workers, adopt_job, r) == 0)
    return;
  atomic_fetch_add(&r->o->repair_failed, 1);
  r->then(r->arg, 0);
  repair_free(r);
}

static void on_pull_reply(void *arg, int status, const ht_envelope *reply) {
  repair *r = arg;
  sim_obj_reply got;
  if (status == 0 && sim_reply_decode(reply->payload, reply->payload_len, &got) == 0) {
    r->answers++;
    if (got.state != SIM_ABSENT && got.version > r->version) {
      uint8_t *copy = got.data_len ? malloc(got.data_len) : NULL;
      if (got.data_len == 0 || copy != NULL) {
        if (copy != NULL)
          memcpy(copy, got.data, got.data_len);
        free(r->data);
        r->data = copy;
        r->len = got.data_len;
        r->version = got.version;
        r->state = got.state;
      } else {
        r->answers--; /* out of memory: this answer cannot be used */
      }
    }
  }
  repair_part_done(r);
}

void osd_repair_start(osd *o, const char *name, size_t name_len,
                      void (*then)(void *arg, int ok), void *arg) {
  repair *r = calloc(1, sizeof(*r) + name_len);
  uint8_t buf[SIM_REQ_HDR + SIM_NAME_MAX];
  sim_obj_req q = {0, name, name_len, NULL, 0};
  size_t n = sim_req_encode(buf, sizeof(buf), &q);
  if (r == NULL || n == 0) {
    free(r);
    atomic_fetch_add(&o->repair_failed, 1);
    then(arg, 0);
    return;
  }
  atomic_fetch_add(&o->repairs, 1);
  *r = (repair){.o = o, .then = then, .arg = arg, .pending = 1, .name_len = name_len,
                .need = o->map.size - o->map.min_size};
  memcpy(r->name, name, name_len);
  unsigned set[SIM_MAX_OSDS];
  unsigned k = sim_map_set(&o->map, sim_map_pg(&o->map, name, name_len), set);
  ht_request_options ro;
  ht_request_options_init(&ro);
  ro.timeout_ms = o->replica_timeout_ms;
  for (unsigned i = 0; i < k; i++) {
    if (set[i] == o->id)
      continue;
    r->pending++;
    if (ht_peer_request(o->peers[set[i]], SIM_OP_PULL, &(ht_payload){buf, n, NULL, NULL}, &ro,
                        on_pull_reply, r) != 0)
      r->pending--; /* never called back: that peer does not count */
  }
  repair_part_done(r); /* the starter's own count */
}

/* --- settling: every peer confirms its connection back to us */

static void on_check_reply(void *arg, int status, const ht_envelope *reply) {
  (void)reply;
  struct check_ctx *c = arg;
  if (status == 0)
    atomic_store(&c->o->rec->confirmed[c->peer], 1);
  atomic_store(&c->o->rec->checking[c->peer], 0);
}

void osd_repair_check_peers(osd *o) {
  struct osd_recovery *rec = o->rec;
  if (rec == NULL || atomic_load(&rec->settled))
    return;
  unsigned todo = 0;
  for (unsigned i = 0; i < o->map.n_osds; i++) {
    if (i == o->id || atomic_load(&rec->confirmed[i]) || atomic_load(&rec->checking[i])) {
      todo += i != o->id && !atomic_load(&rec->confirmed[i]);
      continue;
    }
    todo++;
    uint8_t buf[SIM_REQ_HDR + 8];
    sim_obj_req q = {o->id, "check", 5, NULL, 0};
    size_t n = sim_req_encode(buf, sizeof(buf), &q);
    ht_request_options ro;
    ht_request_options_init(&ro);
    ro.timeout_ms = o->replica_timeout_ms;
    rec->ctx[i] = (struct check_ctx){o, i};
    atomic_store(&rec->checking[i], 1);
    if (ht_peer_request(o->peers[i], SIM_OP_PEER_CHECK, &(ht_payload){buf, n, NULL, NULL}, &ro,
                        on_check_reply, &rec->ctx[i]) != 0)
      atomic_store(&rec->checking[i], 0); /* not connected yet: next tick */
  }
  if (todo == 0) {
    atomic_store(&rec->settled, 1);
    fprintf(stderr, "%s: recovering: every peer is connected back; writes now verify objects\n",
            o->name);
  }
}

/* --- peer side */

static void on_peer_check(void *arg, ht_request *req, const ht_envelope *msg) {
  osd *o = arg;
  sim_obj_req q;
  int status = HT_EINVAL;
  if (sim_req_decode(msg->payload, msg->payload_len, &q) == 0 && q.version < o->map.n_osds &&
      q.version != o->id)
    status = ht_peer_connected(o->peers[q.version]) ? 0 : HT_ENOTCONN;
  ht_request_reply(req, status, NULL);
}

typedef struct pull {
  osd *o;
  ht_request *req;
  size_t name_len;
  char name[];
} pull;

/* Worker thread: our copy as it is (verified or not: the puller takes the
 * newest of several). */
static void pull_job(void *arg) {
  pull *p = arg;
  uint64_t version;
  int state;
  uint8_t *data = NULL;
  size_t len = 0;
  uint8_t *buf = NULL;
  int status = HT_EIO;
  if (sim_store_get(p->o->store, p->name, p->name_len, 1, &version, &state, &data, &len) == 0) {
    sim_obj_reply r = {version, state, data, len};
    status = HT_ENOMEM;
    if ((buf = malloc(SIM_REPLY_HDR + len)) != NULL) {
      size_t n = sim_reply_encode(buf, SIM_REPLY_HDR + len, &r);
      ht_request_reply(p->req, 0, &(ht_payload){buf, n, NULL, NULL}); /* copied */
      status = 0;
    }
  }
  if (status != 0)
    ht_request_reply(p->req, status, NULL);
  free(buf);
  free(data);
  free(p);
}

static void on_pull(void *arg, ht_request *req, const ht_envelope *msg) {
  osd *o = arg;
  sim_obj_req q;
  if (sim_req_decode(msg->payload, msg->payload_len, &q) != 0) {
    ht_request_reply(req, HT_EINVAL, NULL);
    return;
  }
  pull *p = malloc(sizeof(*p) + q.name_len);
  if (p == NULL) {
    ht_request_reply(req, HT_ENOMEM, NULL);
    return;
  }
  *p = (pull){o, req, q.name_len};
  memcpy(p->name, q.name, q.name_len);
  atomic_fetch_add(&o->pulls, 1);
  if (sim_workers_submit(o->workers, pull_job, p) != 0) {
    ht_request_reply(req, HT_ENOMEM, NULL);
    free(p);
  }
}

int osd_repair_register(osd *o) {
  int rc = ht_messenger_handle(o->m, SIM_OP_PULL, on_pull, o);
  return rc != 0 ? rc : ht_messenger_handle(o->m, SIM_OP_PEER_CHECK, on_peer_check, o);
}
