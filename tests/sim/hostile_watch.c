/* sim-hostile: what it watches on the OSD besides its own connections —
 * resident memory from /proc, the remote-DEBUG counters from the traced
 * messenger's control socket, and one legitimate request at the end.
 * Never: block longer than the timeout it is given. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "hoptrace/error.h"
#include "hoptrace/wire.h"
#include "hostile.h"

uint64_t watch_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int watch_mem_kib(pid_t pid, watch_mem *out) {
  char path[64], line[256];
  snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
  *out = (watch_mem){-1, -1, -1};
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return -1;
  while (fgets(line, sizeof(line), f) != NULL) {
    sscanf(line, "VmRSS: %ld kB", &out->rss);
    sscanf(line, "RssAnon: %ld kB", &out->anon);
    sscanf(line, "RssShmem: %ld kB", &out->shmem);
  }
  fclose(f);
  return out->rss >= 0 && out->anon >= 0 ? 0 : -1;
}

/* Reads until a newline or timeout; NUL-terminates. */
static int read_line(int fd, char *buf, size_t cap, int timeout_ms) {
  size_t have = 0;
  uint64_t end = watch_now_ms() + (uint64_t)timeout_ms;
  while (have + 1 < cap) {
    int left = (int)(end - watch_now_ms());
    struct pollfd p = {fd, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, left) <= 0)
      return -1;
    ssize_t n = read(fd, buf + have, cap - 1 - have);
    if (n <= 0)
      return -1;
    have += (size_t)n;
    buf[have] = '\0';
    if (memchr(buf, '\n', have) != NULL)
      return 0;
  }
  return -1;
}

static int counter(const char *line, const char *key, unsigned long long *out) {
  const char *p = strstr(line, key);
  if (p == NULL || sscanf(p + strlen(key), "=%llu", out) != 1)
    return -1;
  return 0;
}

int watch_debug_counters(const char *path, unsigned long long *honoured,
                         unsigned long long *refused) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof(sa.sun_path))
    return -1;
  strcpy(sa.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  char line[4096];
  int rc = -1;
  if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
      write(fd, "status\n", 7) == 7 && read_line(fd, line, sizeof(line), 3000) == 0 &&
      strncmp(line, "ok", 2) == 0 && counter(line, " remote_debug_honoured", honoured) == 0 &&
      counter(line, " remote_debug_refused", refused) == 0)
    rc = 0;
  if (rc != 0)
    fprintf(stderr, "sim-hostile: control socket %s: no status (%s)\n", path,
            fd >= 0 ? "bad answer" : strerror(errno));
  if (fd >= 0)
    close(fd);
  return rc;
}

/* Waits for one whole frame on fd and decodes it. */
static int read_reply(int fd, int timeout_ms) {
  ht_frame_reader *r;
  if (ht_frame_reader_new(0, &r) != 0)
    return -1;
  uint64_t end = watch_now_ms() + (uint64_t)timeout_ms;
  int rc = -1;
  for (;;) {
    int left = (int)(end - watch_now_ms());
    struct pollfd p = {fd, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, left) <= 0)
      break;
    uint8_t buf[4096];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0)
      break;
    size_t used = 0;
    ht_envelope env;
    int frc = ht_frame_reader_feed(r, buf, (size_t)n, &used, &env);
    if (frc == 0) {
      rc = env.type == HT_MSG_REPLY || env.type == HT_MSG_ERROR ? 0 : -1;
      break;
    }
    if (frc != HT_EAGAIN)
      break;
  }
  ht_frame_reader_free(r);
  return rc;
}

int watch_probe(const char *host, int port, int timeout_ms) {
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
    return -1;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  hbuf frame = {0};
  int rc = -1;
  if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
      attack_probe_frame(&frame, 42) == 0 &&
      write(fd, frame.p, frame.len) == (ssize_t)frame.len)
    rc = read_reply(fd, timeout_ms);
  hbuf_free(&frame);
  close(fd);
  return rc;
}
