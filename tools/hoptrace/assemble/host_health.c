/* Per-host accounting (host_health.h). Few hosts, so linear tables; the
 * host of the previous event is tried first. */
#include "assemble/host_health.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HOSTS 256
#define MAX_ADDRS 4096
#define ADDR_CAP 64

typedef struct host_record {
  const char *name;
  uint64_t events, discarded_events, lost_packets;
  int64_t last_ns;
  uint64_t missing_server_spans; /* replies its server span never came with */
  uint64_t orphaned_children;    /* spans whose parent it should have recorded */
} host_record;

typedef struct addr_entry {
  char addr[ADDR_CAP];
  int host;
} addr_entry;

struct host_health {
  host_record hosts[MAX_HOSTS];
  size_t n_hosts;
  int last; /* host of the previous lookup */
  addr_entry *addrs;
  size_t n_addrs;
  int64_t last_ns; /* the input's latest event */
};

host_health *host_health_new(void) {
  host_health *h = calloc(1, sizeof(*h));
  if (h != NULL && (h->addrs = calloc(MAX_ADDRS, sizeof(addr_entry))) == NULL) {
    free(h);
    return NULL;
  }
  return h;
}

void host_health_free(host_health *h) {
  if (h == NULL)
    return;
  for (size_t i = 0; i < h->n_hosts; i++)
    free((char *)h->hosts[i].name);
  free(h->addrs);
  free(h);
}

/* Host names are short: compared inline, this runs once per event. */
static bool same_name(const char *a, const char *b) {
  while (*a != '\0' && *a == *b)
    a++, b++;
  return *a == *b;
}

/* Index of the host named `name`, added when new; -1 past MAX_HOSTS. */
static int host_index(host_health *h, const char *name) {
  if (name == NULL)
    name = "";
  if (h->n_hosts > 0 && same_name(h->hosts[h->last].name, name))
    return h->last;
  for (size_t i = 0; i < h->n_hosts; i++)
    if (strcmp(h->hosts[i].name, name) == 0)
      return h->last = (int)i;
  if (h->n_hosts == MAX_HOSTS)
    return -1;
  char *copy = strdup(name);
  if (copy == NULL)
    return -1;
  h->hosts[h->n_hosts] = (host_record){.name = copy};
  return h->last = (int)h->n_hosts++;
}

void host_health_event(host_health *h, const hop_event *ev) {
  int i = host_index(h, ev->hostname);
  if (i < 0)
    return;
  host_record *r = &h->hosts[i];
  r->events++;
  if (ev->ts_ns > r->last_ns)
    r->last_ns = ev->ts_ns;
  if (ev->ts_ns > h->last_ns)
    h->last_ns = ev->ts_ns;
}

void host_health_discarded(host_health *h, const char *hostname, uint64_t events,
                           uint64_t packets) {
  int i = host_index(h, hostname);
  if (i >= 0) {
    h->hosts[i].discarded_events += events;
    h->hosts[i].lost_packets += packets;
  }
}

/* The address part of a peer URL: tcp://10.0.0.2:6800 -> 10.0.0.2,
 * tcp://[::1]:6800 -> [::1]. 0 when there is none. */
static int peer_addr(const char *peer, char *out) {
  if (peer == NULL)
    return 0;
  const char *at = strstr(peer, "://");
  at = at != NULL ? at + 3 : peer;
  const char *colon = strrchr(at, ':');
  size_t n = colon != NULL && colon > at ? (size_t)(colon - at) : strlen(at);
  if (n == 0 || n >= ADDR_CAP || strncmp(peer, "unix:", 5) == 0)
    return 0;
  memcpy(out, at, n);
  out[n] = '\0';
  return 1;
}

static int host_of_addr(const host_health *h, const char *peer) {
  char addr[ADDR_CAP];
  if (!peer_addr(peer, addr))
    return -1;
  for (size_t i = 0; i < h->n_addrs; i++)
    if (strcmp(h->addrs[i].addr, addr) == 0)
      return h->addrs[i].host;
  return -1;
}

static void learn(host_health *h, const char *peer, int host) {
  char addr[ADDR_CAP];
  if (host < 0 || !peer_addr(peer, addr) || host_of_addr(h, peer) >= 0 ||
      h->n_addrs == MAX_ADDRS)
    return;
  addr_entry *e = &h->addrs[h->n_addrs++];
  memcpy(e->addr, addr, sizeof(e->addr));
  e->host = host;
}

static bool has_server_child(const span *s) {
  for (uint32_t i = 0; i < s->n_children; i++)
    if (s->children[i]->kind == HOP_KIND_SERVER)
      return true;
  return false;
}

void host_health_check(host_health *h, trace *t) {
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i], *p = s->parent;
    if (s->kind == HOP_KIND_SERVER && p != NULL && p->kind == HOP_KIND_CLIENT) {
      int server = host_index(h, s->hostname), client = host_index(h, p->hostname);
      if (server != client) {
        learn(h, p->peer, server);
        learn(h, s->peer, client);
      }
    }
  }
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    int own = host_index(h, s->hostname);
    /* A call that reached its server (its request frame went out) and was
     * answered, with or without an error, owes a server span; one that
     * never reached a server (refused before encoding, its send failed)
     * or got no answer (timed out, reset) owes none. */
    if (s->kind == HOP_KIND_CLIENT && s->ended && span_reached_server(s) &&
        span_annotation_ns(s, "cr") != 0 && !has_server_child(s)) {
      int server = host_of_addr(h, s->peer);
      if (server >= 0 && server != own) { /* answered, but its server recorded nothing */
        h->hosts[server].missing_server_spans++;
        if (t->missing_spans++ == 0)
          t->missing_host = h->hosts[server].name;
      }
    }
    if (s->orphan) {
      int client = host_of_addr(h, s->peer);
      if (client >= 0 && client != own)
        h->hosts[client].orphaned_children++;
    }
  }
}

size_t host_health_count(const host_health *h) { return h->n_hosts; }

const char *host_health_name(const host_health *h, size_t i) {
  return i < h->n_hosts && h->hosts[i].events > 0 ? h->hosts[i].name : NULL;
}

void host_health_print(const host_health *h, int64_t stall_ns, FILE *out) {
  for (size_t i = 0; i < h->n_hosts; i++) {
    const host_record *r = &h->hosts[i];
    fprintf(out, "  host %-16s %10" PRIu64 " events, %" PRIu64 " discarded by LTTng, %" PRIu64
                 " packets lost, %" PRIu64 " server spans missing, %" PRIu64
                 " spans orphaned by it",
            r->name[0] ? r->name : "(unnamed)", r->events, r->discarded_events,
            r->lost_packets, r->missing_server_spans, r->orphaned_children);
    if (r->events > 0 && ns_diff(h->last_ns, r->last_ns) > stall_ns)
      fprintf(out, "; STALLED or VANISHED: its last event came %.1f s before the input's last",
              (double)ns_diff(h->last_ns, r->last_ns) / 1e9);
    fputc('\n', out);
  }
}

int64_t host_health_last_ns(const host_health *h, const char *host) {
  for (size_t i = 0; i < h->n_hosts; i++)
    if (strcmp(h->hosts[i].name, host) == 0)
      return h->hosts[i].events > 0 ? h->hosts[i].last_ns : INT64_MIN;
  return INT64_MIN;
}
