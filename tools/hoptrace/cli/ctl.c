/* `hoptrace ctl SOCKET COMMAND [ARG...]`: sends the words as one line to
 * a traced process's control socket (a local Unix socket, owner-only) and
 * prints the one-line answer. Exit 0 for "ok ...", 1 for "error ...",
 * 2 when the socket cannot be used.
 * Must never: link libhoptrace (the tool depends on the event schema
 * only), or wait without a bound. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/ctl.h"

#define LINE_MAX_BYTES 256 /* HT_CONTROL_LINE_MAX of the library */
#define ANSWER_MAX 4096
#define WAIT_MS 5000

static int usage(void) {
  fputs("usage: hoptrace ctl SOCKET COMMAND [ARG...]\n"
        "  status | sample RATIO | sampler KIND [key=value ...] |\n"
        "  set key=value ... | trust-debug on|off [RATE] | help\n",
        stderr);
  return 2;
}

static int open_socket(const char *path) {
  struct sockaddr_un a;
  memset(&a, 0, sizeof(a));
  a.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof(a.sun_path)) {
    fprintf(stderr, "hoptrace ctl: socket path too long\n");
    return -1;
  }
  memcpy(a.sun_path, path, strlen(path) + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
    fprintf(stderr, "hoptrace ctl: cannot connect to %s: %s\n", path,
            strerror(errno));
    if (fd >= 0)
      close(fd);
    return -1;
  }
  return fd;
}

/* Joins argv into "w1 w2 ...\n"; -1 when too long. */
static int join(int argc, char **argv, char *line, size_t cap) {
  size_t len = 0;
  for (int i = 0; i < argc; i++) {
    size_t n = strlen(argv[i]);
    if (len + n + 2 > cap)
      return -1;
    if (i > 0)
      line[len++] = ' ';
    memcpy(line + len, argv[i], n);
    len += n;
  }
  line[len++] = '\n';
  line[len] = '\0';
  return (int)len;
}

static int read_answer(int fd, char *buf, size_t cap) {
  size_t have = 0;
  while (have + 1 < cap) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, WAIT_MS) <= 0)
      return -1;
    ssize_t n = recv(fd, buf + have, cap - 1 - have, 0);
    if (n <= 0)
      break;
    have += (size_t)n;
    if (memchr(buf, '\n', have) != NULL)
      break;
  }
  buf[have] = '\0';
  return have > 0 ? 0 : -1;
}

int ctl_main(int argc, char **argv) {
  if (argc < 3)
    return usage();
  char line[LINE_MAX_BYTES + 2];
  int len = join(argc - 2, argv + 2, line, sizeof(line));
  if (len < 0) {
    fprintf(stderr, "hoptrace ctl: command longer than %d bytes\n",
            LINE_MAX_BYTES);
    return 2;
  }
  int fd = open_socket(argv[1]);
  if (fd < 0)
    return 2;
  char answer[ANSWER_MAX];
  int rc = send(fd, line, (size_t)len, MSG_NOSIGNAL) == len
               ? read_answer(fd, answer, sizeof(answer))
               : -1;
  close(fd);
  if (rc != 0) {
    fprintf(stderr, "hoptrace ctl: no answer from %s\n", argv[1]);
    return 2;
  }
  fputs(answer, stdout);
  if (answer[strlen(answer) - 1] != '\n')
    fputc('\n', stdout);
  return strncmp(answer, "ok", 2) == 0 ? 0 : 1;
}
