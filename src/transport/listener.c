/* Listeners: bind TCP or Unix sockets, accept connections up to the
 * per-listener limit, and hand them to conn.c. Must never accept beyond
 * the limit (extra connections are accepted and closed at once, with a
 * log line, so the client sees a reset instead of a hang) and never
 * remove a socket file that is not a socket. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hoptrace/error.h"
#include "transport/internal.h"

static void name_accepted(ht_tr_listener *l, ht_tr_conn *c) {
  if (l->is_unix) {
    snprintf(c->name, sizeof(c->name), "unix://");
    return;
  }
  struct sockaddr_storage ss;
  int len = sizeof(ss);
  if (uv_tcp_getpeername(&c->u.tcp, (struct sockaddr *)&ss, &len) != 0)
    snprintf(c->name, sizeof(c->name), "tcp://?");
  else
    ht_tr_addr_name((struct sockaddr *)&ss, false, NULL, c->name, sizeof(c->name));
}

static void on_connection(uv_stream_t *server, int status) {
  ht_tr_listener *l = server->data;
  ht_messenger *m = l->m;
  if (status < 0) {
    ht_tr_log(m, HT_LOG_WARN, "accept: %s", uv_strerror(status));
    return;
  }
  ht_tr_conn *c = ht_tr_conn_new(m, l->is_unix);
  if (c == NULL) {
    ht_tr_log(m, HT_LOG_ERROR, "accept: out of memory");
    return;
  }
  if (uv_accept(server, &c->u.s) != 0) {
    ht_tr_conn_close(c, HT_ECONNRESET);
    return;
  }
  name_accepted(l, c);
  if (l->nconns >= m->opts.max_connections) {
    ht_tr_log(m, HT_LOG_WARN, "%s: refused: %u connections on this listener",
           c->name, l->nconns);
    ht_tr_conn_close(c, HT_ECONNLIMIT);
    return;
  }
  l->nconns++;
  c->listener = l;
  if (!l->is_unix)
    uv_tcp_nodelay(&c->u.tcp, 1);
  ht_tr_conn_start_reading(c);
}

static void on_listener_closed(uv_handle_t *h) {
  ht_tr_listener *l = h->data;
  ht_messenger *m = l->m;
  if (l->is_unix)
    unlink(l->path);
  free(l);
  m->open_handles--;
  ht_tr_check_drained(m);
}

void ht_tr_listener_close(ht_tr_listener *l) {
  for (ht_tr_conn *c = l->m->conns; c != NULL; c = c->next)
    if (c->listener == l)
      c->listener = NULL;
  uv_close(&l->u.h, on_listener_closed);
}

/* A bind, listen or unlink failure (a uv code) the caller can act on gets
 * its own code: the port is taken, or the path is not ours to use. */
static int listen_error(int uv_err) {
  if (uv_err == UV_EADDRINUSE)
    return HT_EADDRINUSE;
  if (uv_err == UV_EACCES || uv_err == UV_EPERM)
    return HT_EACCES;
  return HT_EIO;
}

/* Replaces a stale socket file; anything else at the path is an error. */
static int clear_socket_path(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0)
    return 0;
  if (!S_ISSOCK(st.st_mode))
    return HT_EEXIST;
  /* another user's socket in a sticky directory: EPERM */
  return unlink(path) == 0 ? 0 : listen_error(uv_translate_sys_error(errno));
}

/* True when the directory of path does not exist: libuv reports bind's
 * ENOENT as EACCES, which would send the caller after permissions. */
static bool dir_missing(const ht_tr_addr *a) {
  char dir[sizeof(a->path)];
  memcpy(dir, a->path, sizeof(dir));
  char *slash = strrchr(dir, '/');
  if (slash == NULL)
    return false;
  slash[slash == dir ? 1 : 0] = '\0';
  struct stat st;
  return stat(dir, &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
}

static int bind_listener(ht_tr_listener *l, const ht_tr_addr *a) {
  if (a->is_unix) {
    int rc = clear_socket_path(a->path);
    if (rc != 0)
      return rc;
    rc = uv_pipe_bind(&l->u.pipe, a->path);
    if (rc == UV_EACCES && dir_missing(a))
      return HT_EIO;
    return rc == 0 ? 0 : listen_error(rc);
  }
  /* libuv reports a TCP port in use from uv_listen, not from here */
  int rc = uv_tcp_bind(&l->u.tcp, (const struct sockaddr *)&a->ss, 0);
  return rc == 0 ? 0 : listen_error(rc);
}

static int bound_name(ht_tr_listener *l, char *buf, size_t cap) {
  char name[TR_NAME_MAX];
  if (l->is_unix) {
    ht_tr_addr_name(NULL, true, l->path, name, sizeof(name));
  } else {
    struct sockaddr_storage ss;
    int len = sizeof(ss);
    if (uv_tcp_getsockname(&l->u.tcp, (struct sockaddr *)&ss, &len) != 0)
      return HT_EIO;
    ht_tr_addr_name((struct sockaddr *)&ss, false, NULL, name, sizeof(name));
  }
  if (strlen(name) + 1 > cap)
    return HT_ENOSPC;
  memcpy(buf, name, strlen(name) + 1);
  return 0;
}

typedef struct listen_args {
  const ht_tr_addr *addr;
  char *bound;
  size_t cap;
} listen_args;

static int listen_on_loop(ht_messenger *m, void *arg) {
  listen_args *a = arg;
  if (m->state != TR_RUNNING)
    return HT_ESHUTDOWN;
  ht_tr_listener *l = calloc(1, sizeof(*l));
  if (l == NULL)
    return HT_ENOMEM;
  l->m = m;
  l->is_unix = a->addr->is_unix;
  strcpy(l->path, a->addr->path);
  int rc = l->is_unix ? uv_pipe_init(m->loop, &l->u.pipe, 0)
                      : uv_tcp_init(m->loop, &l->u.tcp);
  if (rc != 0) {
    free(l);
    return HT_EIO;
  }
  l->u.h.data = l;
  m->open_handles++;
  rc = bind_listener(l, a->addr);
  if (rc == 0 && (rc = uv_listen(&l->u.s, 511, on_connection)) != 0)
    rc = listen_error(rc);
  if (rc != 0) {
    l->is_unix = false; /* the path is not ours to unlink */
    uv_close(&l->u.h, on_listener_closed);
    return rc;
  }
  l->next = m->listeners;
  m->listeners = l;
  return a->bound != NULL ? bound_name(l, a->bound, a->cap) : 0;
}

int ht_messenger_listen(ht_messenger *m, const char *url, char *bound,
                        size_t bound_cap) {
  if (m == NULL || url == NULL)
    return HT_EINVAL;
  ht_tr_addr addr;
  int rc = ht_tr_addr_parse(url, &addr);
  if (rc != 0)
    return rc;
  listen_args a = {&addr, bound, bound_cap};
  return ht_tr_run_on_loop(m, listen_on_loop, &a);
}
