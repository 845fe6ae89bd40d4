/* fork/exec helpers for `hoptrace record`. Never leaves a child behind
 * without waiting for it. */
#include "cli/spawn.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int spawn_wait(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
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

int spawn_quiet(char *const argv[]) {
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
  int rc = pid < 0 ? -1 : spawn_wait(pid);
  if (rc != 0) {
    fprintf(stderr, "hoptrace: '%s", argv[0]);
    for (int i = 1; argv[i]; i++)
      fprintf(stderr, " %s", argv[i]);
    fprintf(stderr, "' failed (%d):\n", rc);
    rewind(log);
    char line[512];
    while (fgets(line, sizeof(line), log))
      fprintf(stderr, "  %s", line);
  }
  fclose(log);
  return rc;
}

pid_t process_find(const char *name) {
  DIR *proc = opendir("/proc");
  if (proc == NULL)
    return -1;
  pid_t found = -1;
  uid_t me = getuid();
  struct dirent *e;
  while ((e = readdir(proc)) != NULL) {
    if (!isdigit((unsigned char)e->d_name[0]))
      continue;
    char path[300], comm[64] = "";
    struct stat st;
    snprintf(path, sizeof(path), "/proc/%s", e->d_name);
    if (stat(path, &st) != 0 || st.st_uid != me)
      continue;
    snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
      continue;
    if (fgets(comm, sizeof(comm), f))
      comm[strcspn(comm, "\n")] = '\0';
    fclose(f);
    pid_t pid = (pid_t)atoi(e->d_name);
    if (strcmp(comm, name) == 0 && pid > found)
      found = pid;
  }
  closedir(proc);
  return found;
}

int process_running(const char *name) { return process_find(name) > 0; }
