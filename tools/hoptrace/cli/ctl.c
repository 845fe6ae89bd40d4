/* `hoptrace ctl [--timeout SECONDS] SOCKET COMMAND [ARG...]`: sends the
 * words as one line to a traced process's control socket (a local Unix
 * socket, owner-only) and prints the one-line answer. Exit 0 for
 * "ok ...", 1 for "error ...", 2 when the socket cannot be used, is
 * another user's, closes without answering or does not answer in time.
 * Before sending, the listening process's credentials (SO_PEERCRED) must
 * be ctl's own user or root: a socket another user planted in a shared
 * directory gets nothing.
 * Connecting, sending and the answer share one deadline (default 5 s).
 * On expiry the connection is closed before ctl reports failure, and the
 * process runs no command whose client has hung up (control_conn.c): a
 * command reported as failed is not applied later.
 * Arguments are printable ASCII only: a newline (or any control byte)
 * inside an argument would otherwise start a second command.
 * Must never: link libhoptrace (the tool depends on the event schema
 * only), or wait without a bound. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli/ctl.h"

#define LINE_MAX_BYTES 256 /* HT_CONTROL_LINE_MAX of the library */
#define ANSWER_MAX 4096
#define DEFAULT_TIMEOUT_MS 5000
#define MAX_TIMEOUT_MS 3600000

static int usage(void) {
  fputs("usage: hoptrace ctl [--timeout SECONDS] SOCKET COMMAND [ARG...]\n"
        "       hoptrace ctl [--timeout SECONDS] --each DIR COMMAND [ARG...]\n"
        "  status | sample RATIO | sampler KIND [key=value ...] |\n"
        "  set key=value ... | trust-debug on|off [RATE] | flight on|off |\n"
        "  capture-policy SPEC | capture [TRACE_ID] | help\n"
        "  --each: every socket in DIR (one per process: a cluster's), each\n"
        "  answer on a line of its own after the socket's name\n",
        stderr);
  return 2;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left before deadline (0 when past). */
static int left_ms(int64_t deadline) {
  int64_t left = deadline - now_ms();
  return left > 0 ? (int)left : 0;
}

/* A connected non-blocking socket, or -1 (said why). A listener whose
 * backlog is full makes a Unix connect wait: retried until the deadline. */
static int open_socket(const char *path, int64_t deadline) {
  struct sockaddr_un a;
  memset(&a, 0, sizeof(a));
  a.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof(a.sun_path)) {
    fprintf(stderr, "hoptrace ctl: socket path too long\n");
    return -1;
  }
  memcpy(a.sun_path, path, strlen(path) + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    perror("hoptrace ctl: socket");
    return -1;
  }
  while (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
    if ((errno != EAGAIN && errno != EINTR) || left_ms(deadline) == 0) {
      fprintf(stderr, "hoptrace ctl: cannot connect to %s: %s\n", path,
              errno == EAGAIN ? "not accepting connections in time"
                              : strerror(errno));
      close(fd);
      return -1;
    }
    usleep(10000);
  }
  return fd;
}

/* Joins argv into "w1 w2 ...\n"; -1 when too long, -2 for a byte that
 * is not printable ASCII. */
static int join(int argc, char **argv, char *line, size_t cap) {
  size_t len = 0;
  for (int i = 0; i < argc; i++) {
    size_t n = strlen(argv[i]);
    for (size_t k = 0; k < n; k++)
      if (argv[i][k] < 0x20 || argv[i][k] > 0x7e)
        return -2;
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

/* 0 when the process listening on fd runs as our effective uid or as
 * root; else says who it is and that nothing was sent. */
static int check_listener(int fd, const char *path) {
  struct ucred cred;
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    fprintf(stderr, "hoptrace ctl: refused: cannot tell who listens on %s "
                    "(SO_PEERCRED: %s); nothing was sent\n",
            path, strerror(errno));
    return -1;
  }
  uid_t me = geteuid();
  if (cred.uid == me || cred.uid == 0)
    return 0;
  fprintf(stderr, "hoptrace ctl: refused: the process listening on %s runs "
                  "as uid %u (pid %d), not as you (uid %u) or root; nothing "
                  "was sent\n",
          path, (unsigned)cred.uid, (int)cred.pid, (unsigned)me);
  return -1;
}

/* What became of a send or of waiting for the answer. */
enum { IO_OK = 0, IO_TIMEOUT = -1, IO_CLOSED = -2 };

static int wait_for(int fd, short events, int64_t deadline) {
  struct pollfd p = {fd, events, 0};
  int n;
  do
    n = poll(&p, 1, left_ms(deadline));
  while (n < 0 && errno == EINTR);
  return n > 0 ? 0 : -1;
}

/* IO_CLOSED when the process closed its end (EPIPE): it may still have
 * answered first (a refusal), so the caller reads what is there. */
static int send_line(int fd, const char *line, size_t len, int64_t deadline) {
  for (size_t off = 0; off < len;) {
    if (wait_for(fd, POLLOUT, deadline) != 0)
      return IO_TIMEOUT;
    ssize_t n = send(fd, line + off, len - off, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
      continue;
    if (n <= 0)
      return IO_CLOSED;
    off += (size_t)n;
  }
  return IO_OK;
}

/* One answer line (up to cap - 1 bytes) before the deadline. End of
 * stream or a reset before any byte is IO_CLOSED, not a timeout: a
 * process that closes at once must not be reported as one that is slow. */
static int read_answer(int fd, char *buf, size_t cap, int64_t deadline) {
  size_t have = 0;
  while (have + 1 < cap && memchr(buf, '\n', have) == NULL) {
    if (wait_for(fd, POLLIN, deadline) != 0)
      return IO_TIMEOUT;
    ssize_t n = recv(fd, buf + have, cap - 1 - have, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
      continue;
    if (n <= 0)
      break;
    have += (size_t)n;
  }
  buf[have] = '\0';
  return have > 0 ? IO_OK : IO_CLOSED;
}

/* "--timeout SECONDS" (decimal, > 0) in ms, or -1. */
static int parse_timeout(const char *s) {
  char *end;
  errno = 0;
  double sec = strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !(sec > 0) ||
      sec * 1000 > MAX_TIMEOUT_MS)
    return -1;
  return sec * 1000 < 1 ? 1 : (int)(sec * 1000);
}

/* One command to one socket: 0 ok, 1 the process answered an error, 2
 * no answer (said why). The answer goes to stdout, after `label` when
 * one is given. */
static int ctl_one(const char *path, const char *line, size_t len, int timeout_ms,
                   const char *label) {
  int64_t deadline = now_ms() + timeout_ms;
  int fd = open_socket(path, deadline);
  if (fd < 0)
    return 2;
  if (check_listener(fd, path) != 0) {
    close(fd);
    return 2;
  }
  char answer[ANSWER_MAX];
  int rc = send_line(fd, line, len, deadline);
  if (rc != IO_TIMEOUT)
    rc = read_answer(fd, answer, sizeof(answer), deadline);
  close(fd); /* before reporting: a command not answered is not run later */
  if (rc == IO_CLOSED) {
    fprintf(stderr, "hoptrace ctl: %s: the process closed the connection "
                    "without answering (it refuses connections from other "
                    "users?)\n", path);
    return 2;
  }
  if (rc != IO_OK) {
    fprintf(stderr, "hoptrace ctl: no answer from %s within %.3g s; the "
                    "command was not applied\n", path, timeout_ms / 1000.0);
    return 2;
  }
  if (label != NULL)
    printf("%s: ", label);
  fputs(answer, stdout);
  if (answer[strlen(answer) - 1] != '\n')
    fputc('\n', stdout);
  return strncmp(answer, "ok", 2) == 0 ? 0 : 1;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

#define EACH_MAX 1024 /* sockets in one directory */

/* The command to every socket of dir, in name order, each within its own
 * timeout: the worst outcome (2 also when dir holds no socket). */
static int ctl_each(const char *dir, const char *line, size_t len, int timeout_ms) {
  DIR *d = opendir(dir);
  if (d == NULL) {
    fprintf(stderr, "hoptrace ctl: --each %s: %s\n", dir, strerror(errno));
    return 2;
  }
  char *paths[EACH_MAX];
  size_t n = 0;
  int worst = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char *p = NULL;
    struct stat st;
    if (e->d_name[0] == '.' || asprintf(&p, "%s/%s", dir, e->d_name) < 0)
      continue;
    if (stat(p, &st) != 0 || !S_ISSOCK(st.st_mode) || n == EACH_MAX) {
      if (n == EACH_MAX && stat(p, &st) == 0 && S_ISSOCK(st.st_mode)) {
        fprintf(stderr, "hoptrace ctl: --each %s: more than %d sockets; %s and later "
                        "ones not asked\n", dir, EACH_MAX, p);
        worst = 2;
      }
      free(p);
      continue;
    }
    paths[n++] = p;
  }
  closedir(d);
  if (n == 0) {
    fprintf(stderr, "hoptrace ctl: --each %s: no control socket there\n", dir);
    return 2;
  }
  qsort(paths, n, sizeof(paths[0]), by_name);
  for (size_t i = 0; i < n; i++) {
    int rc = ctl_one(paths[i], line, len, timeout_ms, paths[i]);
    worst = rc > worst ? rc : worst;
    free(paths[i]);
  }
  return worst;
}

int ctl_main(int argc, char **argv) {
  int timeout_ms = DEFAULT_TIMEOUT_MS;
  int first = 1;
  if (argc > 2 && strcmp(argv[1], "--timeout") == 0) {
    if ((timeout_ms = parse_timeout(argv[2])) < 0) {
      fprintf(stderr, "hoptrace ctl: --timeout wants seconds, > 0 and at "
                      "most %d\n", MAX_TIMEOUT_MS / 1000);
      return 2;
    }
    first = 3;
  }
  const char *each = NULL;
  if (argc - first > 1 && strcmp(argv[first], "--each") == 0) {
    each = argv[first + 1];
    first++;
  }
  if (argc - first < 2)
    return usage();
  const char *path = argv[first];
  char line[LINE_MAX_BYTES + 2];
  int len = join(argc - first - 1, argv + first + 1, line, sizeof(line));
  if (len == -2) {
    fprintf(stderr, "hoptrace ctl: arguments must be printable ASCII (a "
                    "newline or control character is refused)\n");
    return 2;
  }
  if (len < 0) {
    fprintf(stderr, "hoptrace ctl: command longer than %d bytes\n",
            LINE_MAX_BYTES);
    return 2;
  }
  return each != NULL ? ctl_each(each, line, (size_t)len, timeout_ms)
                     : ctl_one(path, line, (size_t)len, timeout_ms, NULL);
}
