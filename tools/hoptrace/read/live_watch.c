/* The live graph's watchdog (live_watch.h). */
#include "read/live_watch.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define LOOK_MS 100
#define MAX_PORTS 16
#define LIVE_DEFAULT_PORT 5344 /* lttng-relayd's live port */

struct live_watch {
  bt_interrupter *interrupter;
  atomic_int *stop;
  pthread_t graph_thread, thread;
  _Atomic int64_t entered_ms; /* monotonic; 0: in our code */
  atomic_bool stalled, quit;
  int64_t ending_ms; /* the thread's: when it first saw the end */
  bool cut;
  uint16_t ports[MAX_PORTS];
  size_t n_ports;
};

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_wake(int sig) { (void)sig; } /* only to make recv() fail with EINTR */

/* The relay's port of a net://HOST[:PORT]/... URL. */
static uint16_t url_port(const char *url) {
  const char *host = url + strlen("net://"), *end = strchr(host, '/');
  size_t len = end ? (size_t)(end - host) : strlen(host);
  const char *colon = NULL;
  for (size_t i = 0; i < len; i++) /* the last ':' after any ']' */
    if (host[i] == ':')
      colon = host + i;
    else if (host[i] == ']')
      colon = NULL;
  long port = colon ? strtol(colon + 1, NULL, 10) : 0;
  return port > 0 && port < 65536 ? (uint16_t)port : LIVE_DEFAULT_PORT;
}

/* Shuts down this process's TCP connections to a relay's port: a recv()
 * waiting on one returns at once. */
static void cut_connections(const live_watch *w) {
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL)
    return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    int fd = atoi(e->d_name);
    struct sockaddr_storage peer;
    socklen_t len = sizeof(peer);
    if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d) ||
        getpeername(fd, (struct sockaddr *)&peer, &len) != 0)
      continue;
    uint16_t port = peer.ss_family == AF_INET    ? ntohs(((struct sockaddr_in *)&peer)->sin_port)
                    : peer.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&peer)->sin6_port)
                                                 : 0;
    for (size_t i = 0; port != 0 && i < w->n_ports; i++)
      if (w->ports[i] == port)
        shutdown(fd, SHUT_RDWR);
  }
  closedir(d);
}

static void *watch(void *arg) {
  live_watch *w = arg;
  struct timespec look = {0, LOOK_MS * 1000000L};
  while (!atomic_load(&w->quit)) {
    nanosleep(&look, NULL);
    int64_t entered = atomic_load(&w->entered_ms);
    if (entered != 0 && now_ms() - entered >= LIVE_STALL_MS)
      atomic_store(&w->stalled, true);
    bool end = atomic_load(&w->stalled) || (w->stop != NULL && atomic_load(w->stop));
    if (!end)
      continue;
    bt_interrupter_set(w->interrupter);
    if (w->ending_ms == 0)
      w->ending_ms = now_ms();
    /* only while it waits in babeltrace2: our own writes must not see EINTR */
    if (atomic_load(&w->entered_ms) == 0)
      continue;
    pthread_kill(w->graph_thread, SIGUSR2);
    if (!w->cut && (atomic_load(&w->stalled) || now_ms() - w->ending_ms >= LIVE_CUT_MS)) {
      w->cut = true;
      cut_connections(w);
    }
  }
  return NULL;
}

live_watch *live_watch_start(bt_graph *graph, const char *const *inputs, size_t n_inputs,
                             atomic_int *stop) {
  live_watch *w = calloc(1, sizeof(*w));
  if (w == NULL || (w->interrupter = bt_interrupter_create()) == NULL) {
    free(w);
    return NULL;
  }
  if (bt_graph_add_interrupter(graph, w->interrupter) != BT_GRAPH_ADD_INTERRUPTER_STATUS_OK) {
    bt_interrupter_put_ref(w->interrupter);
    free(w);
    return NULL;
  }
  struct sigaction sa = {.sa_handler = on_wake}; /* no SA_RESTART */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR2, &sa, NULL);
  w->stop = stop;
  for (size_t i = 0; i < n_inputs && w->n_ports < MAX_PORTS; i++)
    w->ports[w->n_ports++] = url_port(inputs[i]);
  w->graph_thread = pthread_self();
  if (pthread_create(&w->thread, NULL, watch, w) != 0) {
    bt_interrupter_put_ref(w->interrupter);
    free(w);
    return NULL;
  }
  return w;
}

void live_watch_enter(live_watch *w) {
  if (w != NULL)
    atomic_store(&w->entered_ms, now_ms());
}

void live_watch_leave(live_watch *w) {
  if (w != NULL)
    atomic_store(&w->entered_ms, 0);
}

bool live_watch_stalled(const live_watch *w) { return w != NULL && atomic_load(&w->stalled); }

void live_watch_stop(live_watch *w) {
  if (w == NULL)
    return;
  atomic_store(&w->quit, true);
  pthread_join(w->thread, NULL);
  live_watch_leave(w);
  bt_interrupter_put_ref(w->interrupter);
  free(w);
}
