/* A listen that fails says why: a TCP port already taken is
 * HT_EADDRINUSE, a Unix path the caller may not use (a directory it
 * cannot write, another user's socket in a sticky directory) is
 * HT_EACCES (for the control socket too), a directory that does not
 * exist stays HT_EIO; the listener that holds the port keeps serving.
 * Root bypasses file permissions, so as root the permission cases run in
 * a child that dropped to uid 65534 (skipped where it may not). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "hoptrace/control.h"
#include "tt_util.h"

#define NOBODY 65534
#define CANNOT_DROP 99 /* the child's exit: setresuid refused */

static void test_tcp_port_in_use(void **state) {
  (void)state;
  ht_messenger *a = tt_messenger("a", NULL, NULL);
  ht_messenger *b = tt_messenger("b", NULL, NULL);
  char url[128];
  assert_int_equal(ht_messenger_listen(a, "tcp://127.0.0.1:0", url, sizeof(url)), 0);
  assert_int_equal(ht_messenger_listen(b, url, NULL, 0), HT_EADDRINUSE);
  assert_int_equal(ht_messenger_listen(a, url, NULL, 0), HT_EADDRINUSE);
  assert_string_equal(ht_err_name(HT_EADDRINUSE), "HT_EADDRINUSE");
  assert_string_equal(ht_strerror(HT_EADDRINUSE), "address already in use");

  /* the listener that holds the port still accepts */
  struct sockaddr_in sin = {.sin_family = AF_INET};
  sin.sin_port = htons((uint16_t)atoi(strrchr(url, ':') + 1));
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
  close(fd);
  assert_int_equal(ht_messenger_close(b, 0), 0);
  assert_int_equal(ht_messenger_close(a, 0), 0);
}

/* A messenger's listen on unix://path. */
static int messenger_listen(const char *path) {
  char url[160];
  snprintf(url, sizeof(url), "unix://%s", path);
  ht_messenger *m = tt_messenger("m", NULL, NULL);
  int rc = ht_messenger_listen(m, url, NULL, 0);
  ht_messenger_close(m, 0);
  return rc;
}

/* The control socket's open at path. */
static int control_open(const char *path) {
  ht_control *c = NULL;
  int rc = ht_control_open(path, &c);
  ht_control_close(c);
  return rc;
}

/* fn(path) as this user, or as root in a child that runs as uid NOBODY;
 * 1 when that child could not drop to it. */
static int as_unprivileged(int (*fn)(const char *), const char *path) {
  if (geteuid() != 0)
    return fn(path);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (setgroups(0, NULL) != 0 || setresgid(NOBODY, NOBODY, NOBODY) != 0 ||
        setresuid(NOBODY, NOBODY, NOBODY) != 0)
      _exit(CANNOT_DROP);
    _exit(-fn(path)); /* the codes are small negatives */
  }
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  return WEXITSTATUS(st) == CANNOT_DROP ? 1 : -WEXITSTATUS(st);
}

/* A socket file at path, nobody listening (a stale one). */
static void stale_socket(const char *path) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
  close(fd);
}

static void test_unix_path_not_ours(void **state) {
  (void)state;
  assert_string_equal(ht_err_name(HT_EACCES), "HT_EACCES");
  assert_string_equal(ht_strerror(HT_EACCES), "permission denied");
  char dir[] = "/tmp/ht-tt-listen-XXXXXX", path[64], stale[64];
  assert_non_null(mkdtemp(dir));

  /* a directory we may read but not write */
  assert_int_equal(chmod(dir, 0555), 0);
  snprintf(path, sizeof(path), "%s/a.sock", dir);
  int rc = as_unprivileged(messenger_listen, path);
  if (rc == 1) {
    rmdir(dir);
    skip(); /* root without the right to drop to another uid */
  }
  assert_int_equal(rc, HT_EACCES);
  assert_int_equal(as_unprivileged(control_open, path), HT_EACCES);

  /* a stale socket we may not remove: as root, root's socket in a sticky
   * directory; otherwise our own in a directory we cannot write */
  snprintf(stale, sizeof(stale), "%s/b.sock", dir);
  assert_int_equal(chmod(dir, 0700), 0);
  stale_socket(stale);
  assert_int_equal(chmod(dir, geteuid() == 0 ? 01777 : 0555), 0);
  assert_int_equal(as_unprivileged(messenger_listen, stale), HT_EACCES);
  assert_int_equal(as_unprivileged(control_open, stale), HT_EACCES);
  struct stat st;
  assert_int_equal(lstat(stale, &st), 0); /* left alone */

  /* no such directory: not a permission problem */
  snprintf(path, sizeof(path), "%s/missing/c.sock", dir);
  assert_int_equal(as_unprivileged(messenger_listen, path), HT_EIO);
  assert_int_equal(as_unprivileged(control_open, path), HT_EIO);

  assert_int_equal(chmod(dir, 0700), 0);
  unlink(stale);
  assert_int_equal(rmdir(dir), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tcp_port_in_use),
      cmocka_unit_test(test_unix_path_not_ours),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
