/* The control protocol (ht_control_execute) against bad and good input,
 * and the control socket: permissions, stale and live socket files, a
 * conversation over the socket, long and binary lines, several clients at
 * once. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "hoptrace/control.h"
#include "hoptrace/error.h"
#include "hoptrace/sampler.h"
#include "test_rng.h"

static char reply[HT_CONTROL_REPLY_MIN];

static int run(const char *line) {
  return ht_control_execute(line, strlen(line), reply, sizeof(reply));
}

static void test_status_and_help(void **state) {
  (void)state;
  assert_int_equal(run("status"), 0);
  assert_memory_equal(reply, "ok sampler=", 11);
  assert_non_null(strstr(reply, "traces_started="));
  assert_non_null(strstr(reply, "msgs_received_sampled="));
  assert_int_equal(run("help"), 0);
  assert_int_equal(run("quit"), 1);
  assert_int_equal(ht_control_execute("x", 1, reply, 10), HT_ENOSPC);
}

static void test_changes(void **state) {
  (void)state;
  ht_sampling_config cfg = {.size = sizeof(cfg)};
  assert_int_equal(run("sample 0.25"), 0);
  ht_sampling_get(&cfg);
  assert_int_equal(cfg.kind, HT_SAMPLER_RATIO);
  assert_true(cfg.ratio == 0.25);
  assert_int_equal(run("sampler rate rate=5 burst=2\n"), 0);
  ht_sampling_get(&cfg);
  assert_int_equal(cfg.kind, HT_SAMPLER_RATE);
  assert_true(cfg.rate == 5 && cfg.burst == 2);
  assert_int_equal(run("trust-debug on 3"), 0);
  ht_sampling_get(&cfg);
  assert_true(cfg.trust_remote_debug && cfg.remote_debug_rate == 3);
  assert_int_equal(run("set ratio=0.5 \t root=ratio"), 0);
  ht_sampling_get(&cfg);
  assert_true(cfg.ratio == 0.5 && cfg.kind == HT_SAMPLER_RATE);
  assert_non_null(strstr(reply, "ratio=0.5"));
}

/* Captures by hand: a trace id of 16 or 32 hex digits, either case, or
 * none; anything else refused. */
static void test_capture_by_hand(void **state) {
  (void)state;
  assert_int_equal(run("capture"), 0);
  assert_non_null(strstr(reply, "captures_fired="));
  assert_int_equal(run("capture 00000000000000000000000000000042"), 0);
  assert_int_equal(run("capture ABCDEF0123456789"), 0);
  assert_int_equal(run("capture 0000000000000000"), HT_EINVAL);
  assert_int_equal(run("capture 12345"), HT_EINVAL);
  assert_int_equal(run("capture 0123456789abcdefg123456789abcdef"), HT_EINVAL);
  assert_int_equal(run("capture 1 2"), HT_EINVAL);
  assert_int_equal(run("capture-policy slow-client=p99.9,error"), 0);
  assert_non_null(strstr(reply, "capture=slow-client=p99.9,error"));
  assert_int_equal(run("capture-policy bogus"), HT_EINVAL);
  assert_int_equal(run("capture-policy off"), 0);
  assert_int_equal(run("flight maybe"), HT_EINVAL);
}

/* Every bad line: an error answer and no change at all. */
static void test_bad_input_changes_nothing(void **state) {
  (void)state;
  assert_int_equal(run("sampler parent ratio=0.5"), 0);
  ht_sampling_config before = {.size = sizeof(before)};
  ht_sampling_config after = {.size = sizeof(after)};
  ht_sampling_get(&before);
  const char *bad[] = {"", "   ", "bogus", "sample", "sample 2", "sample -1",
                       "sample nan", "sample 0.1 0.2", "sampler", "sampler x",
                       "sampler ratio ratio=7", "sampler ratio ratio",
                       "set ratio=0.1 nosuch=1", "set =1", "set",
                       "trust-debug maybe", "trust-debug on -3",
                       "trust-debug", "status now", "sampler ratio ratio=0.1 "
                       "rate=1 rate=1 rate=1 rate=1 rate=1 rate=1 rate=1 "
                       "rate=1 rate=1 rate=1 rate=1 rate=1 rate=1 rate=1"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    int rc = run(bad[i]);
    assert_true(rc < 0);
    assert_memory_equal(reply, "error ", 6);
  }
  char binary[] = "sample \x01\xff";
  assert_int_equal(run(binary), HT_EINVAL);
  char zero[] = {'s', 't', 'a', '\0', 'u', 's'};
  assert_int_equal(ht_control_execute(zero, sizeof(zero), reply, sizeof(reply)),
                   HT_EINVAL);
  char longline[HT_CONTROL_LINE_MAX + 40];
  memset(longline, 'a', sizeof(longline) - 1);
  longline[sizeof(longline) - 1] = '\0';
  assert_int_equal(run(longline), HT_EINVAL);
  /* random bytes: never a crash, never an ok that changes the kind */
  test_rng rng = {6};
  printf("seed 6\n");
  for (int i = 0; i < 20000; i++) {
    char buf[64];
    size_t n = test_rng_below(&rng, sizeof(buf));
    for (size_t j = 0; j < n; j++)
      buf[j] = (char)test_rng_below(&rng, 256);
    ht_control_execute(buf, n, reply, sizeof(reply));
    assert_true(strlen(reply) < sizeof(reply));
  }
  ht_sampling_get(&after);
  assert_int_equal(after.kind, before.kind);
  assert_true(after.ratio == before.ratio);
  assert_int_equal(after.trust_remote_debug, before.trust_remote_debug);
}

static char dir[] = "/tmp/ht-ctl-XXXXXX";
static char path[96];

static int connect_to(const char *p) {
  if (strlen(p) >= sizeof(((struct sockaddr_un *)0)->sun_path))
    return -1;
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  memcpy(a.sun_path, p, strlen(p) + 1);
  if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Sends text, reads until n newlines or EOF. */
static size_t converse(int fd, const char *text, size_t text_len, char *out,
                       size_t cap, int lines) {
  assert_int_equal(send(fd, text, text_len, MSG_NOSIGNAL), (ssize_t)text_len);
  size_t have = 0;
  int seen = 0;
  while (seen < lines && have < cap - 1) {
    ssize_t n = recv(fd, out + have, cap - 1 - have, 0);
    if (n <= 0)
      break;
    for (ssize_t i = 0; i < n; i++)
      seen += out[have + (size_t)i] == '\n';
    have += (size_t)n;
  }
  out[have] = '\0';
  return have;
}

static void test_socket(void **state) {
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/ctl.sock", dir);
  ht_control *c = NULL;
  umask(0); /* the socket must be 0600 whatever the umask */
  assert_int_equal(ht_control_open(path, &c), 0);
  umask(022);
  struct stat st;
  assert_int_equal(lstat(path, &st), 0);
  assert_true(S_ISSOCK(st.st_mode));
  assert_int_equal(st.st_mode & 0777, 0600);

  ht_control *again = NULL; /* a live socket is not taken over */
  assert_int_equal(ht_control_open(path, &again), HT_EEXIST);

  int fd = connect_to(path);
  assert_true(fd >= 0);
  char out[4096];
  const char *talk = "sample 0.5\nstatus\nbogus\n";
  converse(fd, talk, strlen(talk), out, sizeof(out), 3);
  assert_memory_equal(out, "ok sampler=ratio", 16);
  assert_non_null(strstr(out, "\nok sampler=ratio"));
  assert_non_null(strstr(out, "\nerror EINVAL unknown command"));
  converse(fd, "quit\n", 5, out, sizeof(out), 1);
  assert_string_equal(out, "ok bye\n");
  close(fd);

  /* an over-long line: an error, then the connection ends */
  fd = connect_to(path);
  assert_true(fd >= 0);
  char big[HT_CONTROL_LINE_MAX * 3];
  memset(big, 'x', sizeof(big));
  converse(fd, big, sizeof(big), out, sizeof(out), 1);
  assert_string_equal(out, "error EINVAL line too long\n");
  close(fd);

  ht_control_close(c);
  assert_int_equal(lstat(path, &st), -1); /* removed */

  /* a stale socket file (nobody listening) is replaced */
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  memcpy(a.sun_path, path, strlen(path) + 1);
  assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
  close(s);
  assert_int_equal(ht_control_open(path, &c), 0);
  ht_control_close(c);
  /* a regular file is never replaced */
  FILE *f = fopen(path, "w");
  fclose(f);
  assert_int_equal(ht_control_open(path, &c), HT_EEXIST);
  unlink(path);
  char toolong[200];
  memset(toolong, 'p', sizeof(toolong) - 1);
  toolong[sizeof(toolong) - 1] = '\0';
  assert_int_equal(ht_control_open(toolong, &c), HT_EINVAL);
  rmdir(dir);
}

/* Several clients at once: idle connections, more of them than
 * are served at once, delay no other client; a command whose client hung
 * up before it ran is not applied; a half-closed client (no more
 * commands) still gets its answer. */
static void test_concurrent_clients(void **state) {
  (void)state;
  char d[] = "/tmp/ht-ctl-conc-XXXXXX", p[96], out[4096];
  assert_non_null(mkdtemp(d));
  snprintf(p, sizeof(p), "%s/ctl.sock", d);
  ht_control *c = NULL;
  assert_int_equal(ht_control_open(p, &c), 0);
  assert_int_equal(run("sample 0.5"), 0);
  int idle[12];
  for (int i = 0; i < 12; i++) {
    idle[i] = connect_to(p);
    assert_true(idle[i] >= 0);
    if (i % 2)
      assert_int_equal(send(idle[i], "sam", 3, MSG_NOSIGNAL), 3);
  }
  int fd = connect_to(p);
  assert_true(fd >= 0);
  converse(fd, "sample 0.25\n", 12, out, sizeof(out), 1);
  assert_memory_equal(out, "ok sampler=ratio", 16);
  close(fd);

  /* hung up before its line ran: a last line without newline, then gone */
  fd = connect_to(p);
  assert_int_equal(send(fd, "sample 0.125", 12, MSG_NOSIGNAL), 12);
  close(fd);
  /* half-closed: the same kind of last line is run and answered */
  fd = connect_to(p);
  assert_int_equal(send(fd, "status", 6, MSG_NOSIGNAL), 6);
  assert_int_equal(shutdown(fd, SHUT_WR), 0);
  ssize_t got = recv(fd, out, sizeof(out) - 1, MSG_WAITALL);
  assert_true(got > 16);
  assert_memory_equal(out, "ok sampler=ratio", 16);
  close(fd);
  usleep(200000); /* the hung-up one has surely been read by now */
  ht_sampling_config cfg = {.size = sizeof(cfg)};
  ht_sampling_get(&cfg);
  assert_true(cfg.ratio == 0.25);
  for (int i = 0; i < 12; i++)
    close(idle[i]);
  ht_control_close(c);
  rmdir(d);
}

/* Thread ids of this process (at most cap); returns how many. */
static int task_ids(int *ids, int cap) {
  int n = 0;
  DIR *d = opendir("/proc/self/task");
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < cap)
    if (e->d_name[0] != '.')
      ids[n++] = atoi(e->d_name);
  closedir(d);
  return n;
}

static int has_id(const int *ids, int n, int id) {
  for (int i = 0; i < n; i++)
    if (ids[i] == id)
      return 1;
  return 0;
}

/* The control thread blocks every signal even when its creator blocks
 * none: an application waiting for SIGTERM in sigwait must get it (under
 * valgrind the control thread took it and the process died). */
static void test_thread_blocks_signals(void **state) {
  (void)state;
  char d[] = "/tmp/ht-ctl-sig-XXXXXX", p[96];
  assert_non_null(mkdtemp(d));
  snprintf(p, sizeof(p), "%s/ctl.sock", d);
  sigset_t none, old;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, &old);
  int before[256], after[256];
  int nb = task_ids(before, 256);
  ht_control *c = NULL;
  assert_int_equal(ht_control_open(p, &c), 0);
  int fd = connect_to(p); /* the thread runs once it answered */
  char out[4096];
  converse(fd, "help\n", 5, out, sizeof(out), 1);
  close(fd);
  int na = task_ids(after, 256);
  int checked = 0;
  for (int i = 0; i < na; i++) {
    if (has_id(before, nb, after[i]))
      continue;
    char status[64], line[256];
    snprintf(status, sizeof(status), "/proc/self/task/%d/status", after[i]);
    FILE *f = fopen(status, "r");
    assert_non_null(f);
    unsigned long long blocked = 0;
    while (fgets(line, sizeof(line), f) != NULL)
      if (sscanf(line, "SigBlk: %llx", &blocked) == 1)
        break;
    fclose(f);
    assert_true(blocked & (1ull << (SIGTERM - 1)));
    assert_true(blocked & (1ull << (SIGINT - 1)));
    checked++;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  ht_control_close(c);
  rmdir(d);
  assert_int_equal(checked, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status_and_help),
      cmocka_unit_test(test_changes),
      cmocka_unit_test(test_capture_by_hand),
      cmocka_unit_test(test_bad_input_changes_nothing),
      cmocka_unit_test(test_socket),
      cmocka_unit_test(test_thread_blocks_signals),
      cmocka_unit_test(test_concurrent_clients),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
