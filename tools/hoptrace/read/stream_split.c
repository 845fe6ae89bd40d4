/* Stream files -> groups of symbolic links (stream_split.h). */
#include "read/stream_split.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/grow.h"

typedef struct stream_file {
  size_t dir;   /* index in dirs */
  char *name;   /* file name in that directory */
  off_t size;
  size_t group;
} stream_file;

static int by_size_desc(const void *a, const void *b) {
  off_t x = ((const stream_file *)a)->size, y = ((const stream_file *)b)->size;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Appends the non-empty regular files of dir (but metadata) to *files. */
static int list_streams(const char *dir, size_t dir_index, stream_file **files,
                        size_t *n, size_t *cap) {
  DIR *d = opendir(dir);
  if (d == NULL)
    return -1;
  struct dirent *e;
  int rc = 0;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || strcmp(e->d_name, "metadata") == 0)
      continue;
    char path[PATH_MAX];
    struct stat sb;
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path) ||
        stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0)
      continue;
    if (ht_grow(files, cap, *n + 1, sizeof(stream_file), 16) != 0) {
      rc = -1;
      break;
    }
    char *name = strdup(e->d_name);
    if (name == NULL) {
      rc = -1;
      break;
    }
    (*files)[(*n)++] = (stream_file){dir_index, name, sb.st_size, 0};
  }
  closedir(d);
  return rc;
}

static int link_into(const char *target_dir, const char *name, const char *link_dir) {
  char target[PATH_MAX], link[PATH_MAX];
  if ((size_t)snprintf(target, sizeof(target), "%s/%s", target_dir, name) >= sizeof(target) ||
      (size_t)snprintf(link, sizeof(link), "%s/%s", link_dir, name) >= sizeof(link))
    return -1;
  return symlink(target, link) == 0 || errno == EEXIST ? 0 : -1;
}

/* root/t<dir>/ with links to the trace's metadata and index directory. */
static int make_trace_dir(const char *root, size_t dir_index, const char *real_dir,
                          char *out, size_t out_len) {
  if ((size_t)snprintf(out, out_len, "%s/t%zu", root, dir_index) >= out_len)
    return -1;
  if (mkdir(out, 0700) != 0)
    return errno == EEXIST ? 0 : -1;
  char index[PATH_MAX];
  struct stat sb;
  snprintf(index, sizeof(index), "%s/index", real_dir);
  if (link_into(real_dir, "metadata", out) != 0)
    return -1;
  if (stat(index, &sb) == 0 && S_ISDIR(sb.st_mode) && link_into(real_dir, "index", out) != 0)
    return -1;
  return 0;
}

static const char *tmp_dir(void) {
  const char *tmp = getenv("TMPDIR");
  return tmp != NULL && tmp[0] ? tmp : "/tmp";
}

/* Holds root's lock for as long as this process or its decoders live. */
static int lock_root(stream_split *split, const char *root) {
  int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  split->locks[split->n_locks++] = fd;
  return flock(fd, LOCK_EX | LOCK_NB);
}

static int make_groups(char *const *real_dirs, const stream_file *files, size_t n_files,
                       stream_split *split) {
  for (size_t g = 0; g < split->n_groups; g++) {
    char root[PATH_MAX];
    if ((size_t)snprintf(root, sizeof(root), "%s/hoptrace-split.%ld.XXXXXX", tmp_dir(),
                         (long)getpid()) >= sizeof(root) ||
        mkdtemp(root) == NULL || (split->roots[g] = strdup(root)) == NULL ||
        lock_root(split, root) != 0)
      return -1;
  }
  for (size_t i = 0; i < n_files; i++) {
    char trace_dir[PATH_MAX];
    const char *real_dir = real_dirs[files[i].dir];
    if (make_trace_dir(split->roots[files[i].group], files[i].dir, real_dir, trace_dir,
                       sizeof(trace_dir)) != 0 ||
        link_into(real_dir, files[i].name, trace_dir) != 0)
      return -1;
  }
  return 0;
}

static void remove_tree(const char *path, int depth);

/* A directory of a run that died: hoptrace-split.PID.XXXXXX, a real
 * directory of this user, PID gone, and nobody holding its lock (a
 * live run in another PID namespace still holds it). */
static bool stale(const char *dir, const char *name) {
  char *end;
  if (strncmp(name, "hoptrace-split.", 15) != 0)
    return false;
  long pid = strtol(name + 15, &end, 10);
  if (pid <= 0 || *end != '.' || pid == (long)getpid() ||
      kill((pid_t)pid, 0) == 0 || errno != ESRCH)
    return false;
  char path[PATH_MAX];
  struct stat sb;
  if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path) ||
      lstat(path, &sb) != 0 || !S_ISDIR(sb.st_mode) || sb.st_uid != geteuid())
    return false;
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  bool unlocked = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0;
  if (fd >= 0)
    close(fd);
  return unlocked;
}

static void remove_stale(void) {
  DIR *d = opendir(tmp_dir());
  if (d == NULL)
    return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char path[PATH_MAX];
    if (stale(tmp_dir(), e->d_name) &&
        (size_t)snprintf(path, sizeof(path), "%s/%s", tmp_dir(), e->d_name) < sizeof(path))
      remove_tree(path, 0);
  }
  closedir(d);
}

int stream_split_make(char *const *dirs, size_t n_dirs, size_t max_groups,
                      stream_split *split, char *err, size_t err_len) {
  *split = (stream_split){0};
  remove_stale();
  if (max_groups > STREAM_SPLIT_MAX_GROUPS)
    max_groups = STREAM_SPLIT_MAX_GROUPS;
  stream_file *files = NULL;
  size_t n_files = 0, cap = 0;
  char **real_dirs = calloc(n_dirs ? n_dirs : 1, sizeof(char *));
  int rc = real_dirs != NULL ? 0 : -1;
  for (size_t i = 0; rc == 0 && i < n_dirs; i++) {
    real_dirs[i] = realpath(dirs[i], NULL);
    if (real_dirs[i] == NULL || list_streams(real_dirs[i], i, &files, &n_files, &cap) != 0)
      rc = -1;
  }
  if (rc == 0 && (n_files < 2 || max_groups < 2)) {
    rc = 1;
  } else if (rc == 0) {
    /* largest first, each to the lightest group so far */
    qsort(files, n_files, sizeof(*files), by_size_desc);
    split->n_groups = n_files < max_groups ? n_files : max_groups;
    off_t load[STREAM_SPLIT_MAX_GROUPS] = {0};
    for (size_t i = 0; i < n_files; i++) {
      size_t lightest = 0;
      for (size_t g = 1; g < split->n_groups; g++)
        if (load[g] < load[lightest])
          lightest = g;
      files[i].group = lightest;
      load[lightest] += files[i].size;
    }
    rc = make_groups(real_dirs, files, n_files, split);
  }
  if (rc < 0) {
    snprintf(err, err_len, "cannot split the trace's streams for parallel decoding: %s",
             strerror(errno ? errno : ENOMEM));
    stream_split_remove(split);
  }
  for (size_t i = 0; i < n_files; i++)
    free(files[i].name);
  free(files);
  for (size_t i = 0; real_dirs != NULL && i < n_dirs; i++)
    free(real_dirs[i]);
  free(real_dirs);
  return rc;
}

/* Removes the links and directories make_groups made: two levels, links
 * only (unlink never follows a link to the trace's files). */
static void remove_tree(const char *path, int depth) {
  DIR *d = opendir(path);
  if (d != NULL) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      char child[PATH_MAX];
      struct stat sb;
      if ((size_t)snprintf(child, sizeof(child), "%s/%s", path, e->d_name) >= sizeof(child) ||
          lstat(child, &sb) != 0)
        continue;
      if (S_ISDIR(sb.st_mode) && depth == 0)
        remove_tree(child, 1);
      else if (S_ISLNK(sb.st_mode))
        unlink(child);
    }
    closedir(d);
  }
  rmdir(path);
}

void stream_split_remove(stream_split *split) {
  for (size_t g = 0; g < STREAM_SPLIT_MAX_GROUPS; g++) {
    if (split->roots[g] != NULL)
      remove_tree(split->roots[g], 0);
    free(split->roots[g]);
    split->roots[g] = NULL;
  }
  for (size_t i = 0; i < split->n_locks; i++)
    close(split->locks[i]);
  split->n_locks = 0;
  split->n_groups = 0;
}
