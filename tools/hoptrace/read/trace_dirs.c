/* Trace discovery: the directories below an input that hold a CTF trace
 * (a `metadata` file and some stream data), each one src.ctf.fs component
 * or one set of streams to split among decoders. Looks at directory
 * entries and file sizes only. Must never open a trace file or parse
 * CTF, nor descend without bound: TRACE_DIRS_MAX_DEPTH levels below the
 * input, TRACE_DIRS_MAX_VISITED directories, no symbolic link below the
 * input followed (it could lead out of the tree, or around a loop), and
 * the walk ends as soon as the stop flag is set (SIGINT on `report /`). */
#include "read/trace_dirs.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_TRACE_DIRS 4096

static atomic_int *stop_flag;

void bt_trace_dirs_stop_on(atomic_int *flag) { stop_flag = flag; }

const char *bt_trace_dirs_error(int rc) {
  switch (rc) {
  case TRACE_DIRS_TOO_MANY_TRACES: return "more than 4096 CTF traces below it";
  case TRACE_DIRS_TOO_MANY_DIRS: return "more than 65536 directories below it: not a trace directory";
  case TRACE_DIRS_STOPPED: return "interrupted while looking for traces";
  default: return "out of memory";
  }
}

typedef struct walk {
  char ***dirs;
  size_t *n;
  size_t visited;
} walk;

/* 1 when some stream file of the trace directory holds data. LTTng leaves
 * empty stream files when every event was filtered out, and src.ctf.fs
 * refuses a trace with one: such a trace has no event to read anyway. */
static int has_stream_data(const char *trace_dir) {
  DIR *dir = opendir(trace_dir);
  if (dir == NULL)
    return 0;
  int data = 0;
  struct dirent *e;
  while (!data && (e = readdir(dir)) != NULL) {
    if (e->d_name[0] == '.' || strcmp(e->d_name, "metadata") == 0)
      continue;
    char file[4096];
    struct stat sb;
    snprintf(file, sizeof(file), "%s/%s", trace_dir, e->d_name);
    data = stat(file, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
  }
  closedir(dir);
  return data;
}

/* A real directory, not a link to one (d_type when the file system says). */
static bool is_real_dir(const struct dirent *e, const char *path) {
  if (e->d_type != DT_UNKNOWN)
    return e->d_type == DT_DIR;
  struct stat sb;
  return lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int find(walk *w, const char *path, int depth) {
  if (stop_flag != NULL && *stop_flag)
    return TRACE_DIRS_STOPPED;
  if (++w->visited > TRACE_DIRS_MAX_VISITED)
    return TRACE_DIRS_TOO_MANY_DIRS;
  char meta[4096];
  struct stat sb;
  snprintf(meta, sizeof(meta), "%s/metadata", path);
  if (stat(meta, &sb) == 0 && S_ISREG(sb.st_mode)) {
    if (!has_stream_data(path))
      return 0;
    if (*w->n >= MAX_TRACE_DIRS)
      return TRACE_DIRS_TOO_MANY_TRACES;
    char **grown = realloc(*w->dirs, (*w->n + 1) * sizeof(char *));
    if (grown == NULL)
      return -1;
    *w->dirs = grown;
    if (((*w->dirs)[*w->n] = strdup(path)) == NULL)
      return -1;
    (*w->n)++;
    return 0;
  }
  if (depth >= TRACE_DIRS_MAX_DEPTH)
    return 0;
  DIR *dir = opendir(path);
  if (dir == NULL)
    return 0;
  struct dirent *e;
  int rc = 0;
  while (rc == 0 && (e = readdir(dir)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    char child[4096];
    if ((size_t)snprintf(child, sizeof(child), "%s/%s", path, e->d_name) >= sizeof(child))
      continue;
    if (is_real_dir(e, child))
      rc = find(w, child, depth + 1);
  }
  closedir(dir);
  return rc;
}

int bt_find_trace_dirs(const char *path, char ***dirs, size_t *n, int depth) {
  walk w = {dirs, n, 0};
  return find(&w, path, depth);
}

static bool digits(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

bool bt_is_snapshot_name(const char *name) {
  /* from the end: -N (digits), -HHMMSS, -YYYYMMDD, and a name before */
  size_t len = strlen(name), i = len;
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
    i--;
  if (i == len || i < 1 + 7 + 9 + 1 || name[i - 1] != '-')
    return false;
  const char *hms = name + i - 1 - 6, *ymd = hms - 1 - 8;
  return hms[-1] == '-' && digits(hms, 6) && ymd[-1] == '-' && digits(ymd, 8) &&
         ymd - 1 > name;
}

/* A component of path (from `prefix` characters on) named as a
 * snapshot: the input may be one snapshot's directory itself. */
static bool below_a_snapshot(const char *path, size_t prefix) {
  char part[256];
  const char *p = path + prefix;
  while (*p != '\0') {
    while (*p == '/')
      p++;
    size_t n = strcspn(p, "/");
    if (n > 0 && n < sizeof(part)) {
      memcpy(part, p, n);
      part[n] = '\0';
      if (bt_is_snapshot_name(part))
        return true;
    }
    p += n;
  }
  return false;
}

bool bt_inputs_snapshots;

bool bt_inputs_are_flight(const char *const *inputs, size_t n_inputs) {
  bool flight = bt_inputs_snapshots && n_inputs > 0;
  for (size_t i = 0; i < n_inputs; i++)
    if (strncmp(inputs[i], "net://", 6) == 0)
      return false;
  for (size_t i = 0; !flight && i < n_inputs; i++) {
    char file[4096];
    struct stat sb;
    snprintf(file, sizeof(file), "%s/capture.json", inputs[i]);
    if (stat(file, &sb) == 0 && S_ISREG(sb.st_mode)) {
      flight = true;
      break;
    }
    char **dirs = NULL;
    size_t n = 0;
    if (bt_find_trace_dirs(inputs[i], &dirs, &n, 0) == 0)
      for (size_t k = 0; !flight && k < n; k++)
        flight = below_a_snapshot(dirs[k], 0);
    for (size_t k = 0; k < n; k++)
      free(dirs[k]);
    free(dirs);
  }
  return flight;
}
