/* fork/exec helpers for `hoptrace record`. Never leaves a child behind
 * without waiting for it, and never waits for one without a bound
 * (spawn_quiet kills a helper that overruns). */
#include "cli/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int exit_code(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

int spawn_wait(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return exit_code(status);
}

/* Its exit code when pid ends within ms, else -2 (still running). */
static int wait_for(pid_t pid, int ms) {
  for (int waited = 0;; waited += 20) {
    int status;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid)
      return exit_code(status);
    if (r < 0 && errno != EINTR)
      return -1;
    if (waited >= ms)
      return -2;
    usleep(20000);
  }
}

pid_t spawn_child(char *const argv[]) {
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[0], argv);
    fprintf(stderr, "hoptrace: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  return pid;
}

void spawn_print_log(FILE *log) {
  if (log == NULL)
    return;
  rewind(log);
  char line[512];
  while (fgets(line, sizeof(line), log))
    fprintf(stderr, "  %s", line);
}

int spawn_bounded(char *const argv[], int timeout_ms, int report) {
  FILE *log = tmpfile();
  if (log == NULL)
    return -1;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fileno(log), STDOUT_FILENO);
    dup2(fileno(log), STDERR_FILENO);
    execvp(argv[0], argv);
    fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int rc = pid < 0 ? -1 : wait_for(pid, timeout_ms);
  if (rc == -2) { /* overran: killed, and reaped */
    kill(pid, SIGKILL);
    spawn_wait(pid);
  }
  if (rc != 0 && report) {
    fprintf(stderr, "hoptrace: '%s", argv[0]);
    for (int i = 1; argv[i]; i++)
      fprintf(stderr, " %s", argv[i]);
    if (rc == -2)
      fprintf(stderr, "' did not finish within %.1f s (killed):\n", timeout_ms / 1000.0);
    else
      fprintf(stderr, "' failed (%d):\n", rc);
    spawn_print_log(log);
  }
  fclose(log);
  return rc == -2 ? SPAWN_OVERRAN : rc;
}

int spawn_quiet(char *const argv[]) {
  return spawn_bounded(argv, SPAWN_HELPER_MS, 1);
}

pid_t spawn_logged(char *const argv[], FILE *log) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    setsid(); /* the terminal's ^C is for the recorded command, not it */
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, STDIN_FILENO);
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
    }
    if (log != NULL) {
      dup2(fileno(log), STDOUT_FILENO);
      dup2(fileno(log), STDERR_FILENO);
    }
    execvp(argv[0], argv);
    fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  return pid;
}

static volatile sig_atomic_t ready_signal;
static void on_ready(int sig) { ready_signal = sig; }

pid_t spawn_daemon(char *const argv[], int timeout_ms) {
  FILE *log = tmpfile();
  if (log == NULL)
    return -1;
  struct sigaction sa = {.sa_handler = on_ready}, old;
  sigemptyset(&sa.sa_mask);
  ready_signal = 0;
  sigaction(SIGUSR1, &sa, &old);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    setsid(); /* the terminal's ^C is for the recorded command, not it */
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0)
      dup2(null, STDIN_FILENO);
    dup2(fileno(log), STDOUT_FILENO);
    dup2(fileno(log), STDERR_FILENO);
    execvp(argv[0], argv);
    fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int rc = -2;
  for (int waited = 0; pid > 0 && !ready_signal && rc == -2; waited += 20)
    rc = waited >= timeout_ms ? -3 : wait_for(pid, 20);
  sigaction(SIGUSR1, &old, NULL);
  if (pid > 0 && ready_signal) {
    fclose(log);
    return pid;
  }
  if (rc == -3) /* never said it was ready: it goes, with its children */
    spawn_stop(pid, 0);
  fprintf(stderr, "hoptrace: %s did not start (%s):\n", argv[0],
          pid < 0 ? "fork failed" : rc == -3 ? "not ready in time" : "it exited");
  spawn_print_log(log);
  fclose(log);
  return -1;
}

void spawn_stop(pid_t pid, int grace_ms) {
  if (pid <= 0)
    return;
  kill(pid, SIGTERM);
  if (wait_for(pid, grace_ms) != -2)
    return;
  kill(-pid, SIGKILL); /* its process group (setsid): helpers too */
  kill(pid, SIGKILL);
  spawn_wait(pid);
}
