/* Raw loopback sockets for the transport tests: a client that writes
 * arbitrary bytes, and a way to see whether the server closed it. */
#ifndef HT_TT_RAW_H
#define HT_TT_RAW_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "tt_util.h"

/* Connects to a "tcp://127.0.0.1:PORT" URL; returns the fd or -1. */
static inline int tt_raw_connect(const char *url) {
  const char *colon = strrchr(url, ':');
  if (colon == NULL)
    return -1;
  struct sockaddr_in sa = {.sin_family = AF_INET,
                           .sin_port = htons((uint16_t)atoi(colon + 1))};
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* 1 when the peer closed fd (EOF or reset) within timeout_ms, 0 when it
 * is still open. Discards whatever data arrives meanwhile. */
static inline int tt_raw_closed_by_peer(int fd, int timeout_ms) {
  struct timeval tv = {0, 20000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  uint64_t until = tt_now_ms() + (uint64_t)timeout_ms;
  char buf[4096];
  while (tt_now_ms() < until) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET))
      return 1;
  }
  return 0;
}

static inline void tt_put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

#endif
