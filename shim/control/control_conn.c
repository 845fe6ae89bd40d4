/* A control connection's lines, run as they arrive (see control_conn.h).
 * A command runs only while its client is still connected: a client that
 * gave up (`hoptrace ctl` after its deadline) and reported failure must
 * not see its command applied later.
 * Must never: block (every call is non-blocking), run a line of a client
 * that has hung up, or answer into a buffer the client does not read. */
#include "control/control_conn.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "hoptrace/control.h"

int ht_ctl_conn_send(int fd, const char *text) {
  char buf[HT_CONTROL_REPLY_MIN + 1];
  size_t len = strnlen(text, HT_CONTROL_REPLY_MIN - 1);
  memcpy(buf, text, len);
  buf[len++] = '\n';
  ssize_t n;
  do
    n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  /* a socket buffer too full for one answer: the client does not read */
  return n == (ssize_t)len ? 0 : -1;
}

/* The client closed its end (POLLHUP): nobody would learn the outcome. A
 * half-close (shutdown SHUT_WR, "no more commands") is not a hang-up. */
static int peer_gone(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)) != 0;
}

/* Runs one line and answers it; -1 when the connection is over. */
static int run_line(int fd, const char *line, size_t len) {
  if (peer_gone(fd))
    return -1;
  char reply[HT_CONTROL_REPLY_MIN];
  int rc = ht_control_execute(line, len, reply, sizeof(reply));
  if (ht_ctl_conn_send(fd, reply) != 0 || rc == 1)
    return -1;
  return 0;
}

int ht_ctl_conn_ready(ht_ctl_conn *c, uint64_t now_ms) {
  size_t room;
  char *at = ht_ctl_reader_space(&c->reader, &room);
  ssize_t n;
  do
    n = recv(c->fd, at, room, MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  const char *line;
  size_t len;
  if (n == 0) { /* EOF: a last line without newline still counts */
    if (ht_ctl_reader_rest(&c->reader, &line, &len))
      run_line(c->fd, line, len);
    return -1;
  }
  c->active_ms = now_ms;
  ht_ctl_reader_commit(&c->reader, (size_t)n);
  int more;
  while ((more = ht_ctl_reader_next(&c->reader, &line, &len)) == 1)
    if (run_line(c->fd, line, len) != 0)
      return -1;
  if (more < 0) {
    ht_ctl_conn_send(c->fd, "error EINVAL line too long");
    return -1;
  }
  return 0;
}
