/* The control socket: a local Unix stream socket, owner-only (0600 and a
 * peer-credential check on every connection), served by one thread that
 * reads lines and answers each with ht_control_execute.
 * Must never: listen on anything but a Unix socket, let another user in,
 * allocate per byte received, or block close for longer than one poll. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "hoptrace/control.h"
#include "hoptrace/error.h"

#define IDLE_MS 10000 /* a silent client is dropped after this */
#define SEND_TIMEOUT_S 2

struct ht_control {
  struct sockaddr_un addr;
  ino_t ino; /* of the socket file we created: unlink only that */
  int lfd;
  int wake[2]; /* close writes here; the thread polls wake[0] */
  pthread_t thread;
};

/* 1 when fd is ready to read, 0 when woken for close or idle, -1 error. */
static int wait_readable(ht_control *c, int fd, int timeout_ms) {
  struct pollfd p[2] = {{fd, POLLIN, 0}, {c->wake[0], POLLIN, 0}};
  for (;;) {
    int n = poll(p, 2, timeout_ms);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0 || (p[1].revents & POLLIN))
      return 0;
    return 1;
  }
}

static void send_line(int fd, const char *text) {
  size_t len = strlen(text);
  char buf[HT_CONTROL_REPLY_MIN + 1];
  memcpy(buf, text, len);
  buf[len++] = '\n';
  for (size_t off = 0; off < len;) {
    ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return; /* the client's problem: stop answering it */
    off += (size_t)n;
  }
}

/* Same user as this process, or root. */
static bool peer_allowed(int fd) {
  struct ucred cred;
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    return false;
  return cred.uid == geteuid() || cred.uid == 0;
}

/* Runs the lines of one connection; returns when it ends. */
static void serve(ht_control *c, int fd) {
  char buf[HT_CONTROL_LINE_MAX + 2];
  char reply[HT_CONTROL_REPLY_MIN];
  size_t have = 0;
  for (;;) {
    char *nl;
    while ((nl = memchr(buf, '\n', have)) != NULL) {
      size_t line_len = (size_t)(nl - buf);
      int rc = ht_control_execute(buf, line_len, reply, sizeof(reply));
      send_line(fd, reply);
      if (rc == 1)
        return;
      have -= line_len + 1;
      memmove(buf, nl + 1, have);
    }
    if (have == sizeof(buf)) {
      send_line(fd, "error EINVAL line too long");
      return;
    }
    if (wait_readable(c, fd, IDLE_MS) != 1)
      return;
    ssize_t n = recv(fd, buf + have, sizeof(buf) - have, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) { /* EOF: a last line without newline still counts */
      if (n == 0 && have > 0) {
        ht_control_execute(buf, have, reply, sizeof(reply));
        send_line(fd, reply);
      }
      return;
    }
    have += (size_t)n;
  }
}

static void *control_thread(void *arg) {
  ht_control *c = arg;
  /* The process's signals are for the application's own threads (an
   * application waiting in sigwait must get its SIGTERM), never for this
   * one, whatever mask its creator had. */
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  for (;;) {
    int r = wait_readable(c, c->lfd, -1);
    if (r != 1)
      return NULL;
    int fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
      continue;
    struct timeval tv = {SEND_TIMEOUT_S, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (peer_allowed(fd))
      serve(c, fd);
    else
      send_line(fd, "error EPERM not the owner of this process");
    close(fd);
  }
}

/* An existing file at the path: a dead socket is replaced, anything else
 * (a live socket, a regular file) is left alone. */
static int clear_stale(const struct sockaddr_un *addr) {
  struct stat st;
  if (lstat(addr->sun_path, &st) != 0)
    return errno == ENOENT ? 0 : HT_EIO;
  if (!S_ISSOCK(st.st_mode))
    return HT_EEXIST;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return HT_EIO;
  int live = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0;
  close(fd);
  if (live)
    return HT_EEXIST;
  return unlink(addr->sun_path) == 0 ? 0 : HT_EIO;
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
    return errno == EADDRINUSE ? HT_EEXIST : HT_EIO;
  if (chmod(c->addr.sun_path, 0600) != 0 || lstat(c->addr.sun_path, &st) != 0 ||
      listen(c->lfd, 8) != 0) {
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
