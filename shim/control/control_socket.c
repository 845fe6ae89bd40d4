/* The control socket: a local Unix stream socket, owner-only (0600 and a
 * peer-credential check on every connection), served by one thread that
 * polls up to MAX_CONNS connections at once and answers each line with
 * ht_control_execute (control_conn.c). An idle or slow client holds only
 * its own slot: it never delays another client's command.
 * Must never: listen on anything but a Unix socket, let another user in,
 * allocate per byte received, block on one client, or block close for
 * longer than one poll. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "hoptrace/control.h"
#include "hoptrace/error.h"
#include "control/control_conn.h"

#define IDLE_MS 10000 /* a silent client is dropped after this */
/* Connections served at once; one more evicts the longest idle, so a
 * client that connects is always served. */
#define MAX_CONNS 8

struct ht_control {
  struct sockaddr_un addr;
  ino_t ino; /* of the socket file we created: unlink only that */
  int lfd;
  int wake[2]; /* close writes here; the thread polls wake[0] */
  pthread_t thread;
  ht_ctl_conn conns[MAX_CONNS];
};

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Same user as this process, or root; else answers why (one
 * non-blocking send: `hoptrace ctl` prints it instead of guessing). */
static bool peer_allowed(int fd) {
  struct ucred cred;
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    ht_ctl_conn_send(fd, "error EPERM refused: cannot tell who you are");
    return false;
  }
  uid_t me = geteuid();
  if (cred.uid == me || cred.uid == 0)
    return true;
  char why[128];
  snprintf(why, sizeof(why),
           "error EPERM refused: you are uid %u; this process serves uid %u "
           "and root only",
           (unsigned)cred.uid, (unsigned)me);
  ht_ctl_conn_send(fd, why);
  return false;
}

static void drop(ht_ctl_conn *c) {
  if (c->fd >= 0)
    close(c->fd);
  c->fd = -1;
}

/* A free slot, else the longest idle connection's (dropped). */
static ht_ctl_conn *slot_for_new(ht_control *ctl) {
  ht_ctl_conn *oldest = &ctl->conns[0];
  for (int i = 0; i < MAX_CONNS; i++) {
    if (ctl->conns[i].fd < 0)
      return &ctl->conns[i];
    if (ctl->conns[i].active_ms < oldest->active_ms)
      oldest = &ctl->conns[i];
  }
  drop(oldest);
  return oldest;
}

static void accept_one(ht_control *ctl, uint64_t now) {
  int fd = accept4(ctl->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) {
    if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
      usleep(100000); /* the listener stays readable: do not spin */
    return;
  }
  if (!peer_allowed(fd)) {
    close(fd);
    return;
  }
  ht_ctl_conn *c = slot_for_new(ctl);
  c->fd = fd;
  c->active_ms = now;
  ht_ctl_reader_init(&c->reader);
}

/* Polls the wake pipe, the listener and every connection; 0 when woken
 * for close. */
static int serve_once(ht_control *ctl) {
  struct pollfd p[2 + MAX_CONNS];
  int idx[MAX_CONNS], n = 2;
  uint64_t now = now_ms();
  int timeout = -1;
  p[0] = (struct pollfd){ctl->wake[0], POLLIN, 0};
  p[1] = (struct pollfd){ctl->lfd, POLLIN, 0};
  for (int i = 0; i < MAX_CONNS; i++) {
    ht_ctl_conn *c = &ctl->conns[i];
    if (c->fd < 0)
      continue;
    if (now - c->active_ms >= IDLE_MS) {
      drop(c);
      continue;
    }
    int left = (int)(c->active_ms + IDLE_MS - now);
    timeout = timeout < 0 || left < timeout ? left : timeout;
    idx[n - 2] = i;
    p[n++] = (struct pollfd){c->fd, POLLIN, 0};
  }
  if (poll(p, (nfds_t)n, timeout) < 0)
    return errno == EINTR ? 1 : 0;
  if (p[0].revents != 0)
    return 0;
  now = now_ms();
  for (int k = 2; k < n; k++)
    if (p[k].revents != 0 && ht_ctl_conn_ready(&ctl->conns[idx[k - 2]], now) != 0)
      drop(&ctl->conns[idx[k - 2]]);
  if (p[1].revents & POLLIN)
    accept_one(ctl, now);
  return 1;
}

static void *control_thread(void *arg) {
  ht_control *ctl = arg;
  /* The process's signals are for the application's own threads (an
   * application waiting in sigwait must get its SIGTERM), never for this
   * one, whatever mask its creator had. */
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  while (serve_once(ctl))
    ;
  for (int i = 0; i < MAX_CONNS; i++)
    drop(&ctl->conns[i]);
  return NULL;
}

/* errno of a failed lstat, unlink or bind of the path: a directory we may
 * not search or write, or another user's socket in a sticky directory, is
 * HT_EACCES, as for a messenger's listener (listener.c). */
static int path_error(int err) {
  return err == EACCES || err == EPERM ? HT_EACCES : HT_EIO;
}

/* An existing file at the path: a dead socket is replaced, anything else
 * (a live socket, a regular file) is left alone. */
static int clear_stale(const struct sockaddr_un *addr) {
  struct stat st;
  if (lstat(addr->sun_path, &st) != 0)
    return errno == ENOENT ? 0 : path_error(errno);
  if (!S_ISSOCK(st.st_mode))
    return HT_EEXIST;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return HT_EIO;
  int live = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0;
  close(fd);
  if (live)
    return HT_EEXIST;
  return unlink(addr->sun_path) == 0 ? 0 : path_error(errno);
}

static int bind_socket(ht_control *c) {
  int rc = clear_stale(&c->addr);
  if (rc != 0)
    return rc;
  c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (c->lfd < 0)
    return HT_EIO;
  struct stat st;
  /* 0600 right after bind; a connection in between is refused by the
   * peer-credential check. */
  if (bind(c->lfd, (const struct sockaddr *)&c->addr, sizeof(c->addr)) != 0)
    /* a file appeared at the path since clear_stale: HT_EEXIST, as there */
    return errno == EADDRINUSE ? HT_EEXIST : path_error(errno);
  if (chmod(c->addr.sun_path, 0600) != 0 || lstat(c->addr.sun_path, &st) != 0 ||
      listen(c->lfd, 16) != 0) {
    unlink(c->addr.sun_path);
    return HT_EIO;
  }
  c->ino = st.st_ino;
  return 0;
}

static void release(ht_control *c) {
  if (c->lfd >= 0)
    close(c->lfd);
  if (c->wake[0] >= 0)
    close(c->wake[0]);
  if (c->wake[1] >= 0)
    close(c->wake[1]);
  free(c);
}

int ht_control_open(const char *path, ht_control **out) {
  if (path == NULL || out == NULL || path[0] == '\0')
    return HT_EINVAL;
  ht_control *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return HT_ENOMEM;
  c->lfd = c->wake[0] = c->wake[1] = -1;
  for (int i = 0; i < MAX_CONNS; i++)
    c->conns[i].fd = -1;
  c->addr.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof(c->addr.sun_path)) {
    release(c);
    return HT_EINVAL;
  }
  strcpy(c->addr.sun_path, path);
  if (pipe2(c->wake, O_CLOEXEC) != 0) {
    release(c);
    return HT_EIO;
  }
  int rc = bind_socket(c);
  if (rc == 0 && pthread_create(&c->thread, NULL, control_thread, c) != 0) {
    unlink(c->addr.sun_path);
    rc = HT_EIO;
  }
  if (rc != 0) {
    release(c);
    return rc;
  }
  *out = c;
  return 0;
}

void ht_control_close(ht_control *c) {
  if (c == NULL)
    return;
  ssize_t n;
  do
    n = write(c->wake[1], "x", 1);
  while (n < 0 && errno == EINTR);
  pthread_join(c->thread, NULL);
  struct stat st;
  if (lstat(c->addr.sun_path, &st) == 0 && st.st_ino == c->ino)
    unlink(c->addr.sun_path);
  release(c);
}
