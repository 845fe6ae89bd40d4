/* The gateway's OSD side: the messenger on its own thread, a peer per
 * OSD, and one object operation as a blocking call (the HTTP connection's
 * thread waits on a condition variable for the reply callback).
 *
 * Never: wait beyond the messenger's request timeout (the reply callback
 * runs exactly once for an accepted request: answer, timeout, reset or
 * shutdown). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gateway.h"
#include "hoptrace/error.h"
#include "sim_proto.h"

typedef struct call {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int done, status;
  ht_envelope *reply;
} call;

static void on_reply(void *arg, int status, const ht_envelope *reply) {
  call *c = arg;
  ht_envelope *copy = NULL;
  if (status == 0 && ht_message_copy(reply, &copy) != 0)
    status = HT_ENOMEM;
  pthread_mutex_lock(&c->lock);
  c->status = status;
  c->reply = copy;
  c->done = 1;
  pthread_cond_signal(&c->cond);
  pthread_mutex_unlock(&c->lock);
}

/* The first connected member of the object's set, or NULL. */
static ht_peer *target(gw_osd *g, const char *name) {
  unsigned set[SIM_MAX_OSDS];
  unsigned n = sim_map_set(&g->map, sim_map_pg(&g->map, name, strlen(name)), set);
  for (unsigned i = 0; i < n; i++)
    if (ht_peer_connected(g->peers[set[i]]))
      return g->peers[set[i]];
  return NULL;
}

uint64_t gw_osd_next_version(gw_osd *g) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  uint64_t last = atomic_load(&g->version), next;
  do
    next = now > last ? now : last + 1;
  while (!atomic_compare_exchange_weak(&g->version, &last, next));
  return next;
}

int gw_osd_call(gw_osd *g, const char *op, const char *name, const void *data, size_t len,
                ht_envelope **reply) {
  *reply = NULL;
  ht_peer *p = target(g, name);
  if (p == NULL)
    return HT_ENOTCONN;
  int mutation = strcmp(op, SIM_OP_READ) != 0;
  size_t cap = SIM_REQ_HDR + strlen(name) + len;
  uint8_t *buf = malloc(cap);
  if (buf == NULL)
    return HT_ENOMEM;
  sim_obj_req r = {mutation ? gw_osd_next_version(g) : 0, name, strlen(name), data, len};
  size_t n = sim_req_encode(buf, cap, &r);
  call c = {.done = 0};
  pthread_mutex_init(&c.lock, NULL);
  pthread_cond_init(&c.cond, NULL);
  ht_payload pl = {buf, n, NULL, NULL}; /* copied: buf is ours again at once */
  int rc = n == 0 ? HT_EINVAL : ht_peer_request(p, op, &pl, NULL, on_reply, &c);
  free(buf);
  if (rc == 0) {
    pthread_mutex_lock(&c.lock);
    while (!c.done)
      pthread_cond_wait(&c.cond, &c.lock);
    pthread_mutex_unlock(&c.lock);
    rc = c.status;
    *reply = c.reply;
  }
  pthread_cond_destroy(&c.cond);
  pthread_mutex_destroy(&c.lock);
  return rc;
}

int gw_osd_open(gw_osd *g, const sim_common_opts *o, const char *name, sim_log *log) {
  if (sim_messenger_create(&g->m, o, name, NULL, g->timeout_ms, log) != 0)
    return -1;
  for (unsigned i = 0; i < g->map.n_osds; i++) {
    int rc = ht_messenger_connect(g->m, g->map.urls[i], &g->peers[i]);
    if (rc != 0) {
      fprintf(stderr, "%s: connect %s: %s\n", name, g->map.urls[i], ht_strerror(rc));
      return -1;
    }
  }
  for (int t = 0; t < 500; t++) { /* 5 s: then serve with whom is up */
    unsigned up = 0;
    for (unsigned i = 0; i < g->map.n_osds; i++)
      up += ht_peer_connected(g->peers[i]) != 0;
    if (up == g->map.n_osds)
      return 0;
    nanosleep(&(struct timespec){0, 10000000L}, NULL);
  }
  fprintf(stderr, "%s: not every OSD connected after 5 s; serving anyway\n", name);
  return 0;
}

void gw_osd_close(gw_osd *g) {
  if (g->m != NULL)
    ht_messenger_close(g->m, 1000);
  g->m = NULL;
}
