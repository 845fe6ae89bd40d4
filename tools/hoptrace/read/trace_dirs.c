/* Trace discovery: the directories below an input that hold a CTF trace
 * (a `metadata` file and some stream data), each one src.ctf.fs component
 * or one set of streams to split among decoders. Looks at directory
 * entries and file sizes only. Must never open a trace file or parse
 * CTF, nor descend without bound (8 levels below the input at most). */
#include "read/trace_dirs.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_TRACE_DIRS 4096

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

int bt_find_trace_dirs(const char *path, char ***dirs, size_t *n, int depth) {
  char meta[4096];
  struct stat sb;
  snprintf(meta, sizeof(meta), "%s/metadata", path);
  if (stat(meta, &sb) == 0 && S_ISREG(sb.st_mode)) {
    if (!has_stream_data(path))
      return 0;
    if (*n >= MAX_TRACE_DIRS)
      return -1;
    char **grown = realloc(*dirs, (*n + 1) * sizeof(char *));
    if (grown == NULL)
      return -1;
    *dirs = grown;
    (*dirs)[(*n)++] = strdup(path);
    return 0;
  }
  if (depth > 8)
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
    snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
    if (stat(child, &sb) == 0 && S_ISDIR(sb.st_mode))
      rc = bt_find_trace_dirs(child, dirs, n, depth + 1);
  }
  closedir(dir);
  return rc;
}
