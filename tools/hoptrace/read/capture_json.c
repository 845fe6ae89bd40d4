/* capture.json (capture_json.h): a few numbers, read by key. Not a JSON
 * parser: a key is found as "key" then ':' and a number; the latency
 * quantiles within trigger_to_snapshot_ms's object. Must never read more
 * than 1 MiB of a file nor follow links below an input. */
#include "read/capture_json.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_FILE_BYTES (1 << 20)

static const char *skip_space(const char *v, const char *end) {
  while (v < end && (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r'))
    v++;
  return v;
}

/* The value after "key": (from text on, before end), or NULL. */
static const char *value_of(const char *text, const char *end, const char *key) {
  char quoted[64];
  snprintf(quoted, sizeof(quoted), "\"%s\"", key);
  size_t n = strlen(quoted);
  for (const char *p = text; (p = strstr(p, quoted)) != NULL && p + n <= end; p += n) {
    const char *v = skip_space(p + n, end);
    if (v < end && *v == ':')
      return skip_space(v + 1, end);
  }
  return NULL;
}

static int64_t int_of(const char *text, const char *key) {
  const char *end = text + strlen(text), *v = value_of(text, end, key);
  if (v == NULL)
    return -1;
  char *stop;
  long long x = strtoll(v, &stop, 10);
  return stop == v || x < 0 ? -1 : (int64_t)x;
}

static double ms_of(const char *text, const char *end, const char *key) {
  const char *v = value_of(text, end, key);
  if (v == NULL)
    return -1;
  char *stop;
  double x = strtod(v, &stop);
  return stop == v || !(x >= 0) ? -1 : x;
}

int capture_json_parse(const char *text, capture_counts *c) {
  c->triggers_fired = int_of(text, "triggers_fired");
  c->snapshots = int_of(text, "snapshots");
  c->coalesced = int_of(text, "coalesced");
  c->rate_limited = int_of(text, "rate_limited");
  c->dropped = int_of(text, "dropped");
  c->daemon_dropped = int_of(text, "daemon_dropped_notifications");
  c->tracer_discarded = int_of(text, "tracer_discarded_notifications");
  c->snapshot_failures = int_of(text, "snapshot_failures");
  c->p50_ms = c->p99_ms = -1;
  const char *end = text + strlen(text), *obj = value_of(text, end, "trigger_to_snapshot_ms");
  if (obj != NULL && *obj == '{') {
    const char *close = strchr(obj, '}');
    if (close != NULL) {
      c->p50_ms = ms_of(obj, close, "p50");
      c->p99_ms = ms_of(obj, close, "p99");
    }
  }
  return c->triggers_fired < 0 && c->snapshots < 0 && c->coalesced < 0 ? -1 : 0;
}

static void read_one(const char *dir, capture_files *out) {
  char path[512];
  struct stat sb;
  if ((size_t)snprintf(path, sizeof(path), "%s/capture.json", dir) >= sizeof(path) ||
      lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
    return;
  if (out->n == CAPTURE_JSON_MAX_FILES || sb.st_size > MAX_FILE_BYTES) {
    out->unreadable++;
    return;
  }
  FILE *f = fopen(path, "r");
  char *text = f != NULL ? malloc((size_t)sb.st_size + 1) : NULL;
  size_t got = text != NULL ? fread(text, 1, (size_t)sb.st_size, f) : 0;
  if (f != NULL)
    fclose(f);
  capture_counts *c = &out->files[out->n];
  if (text != NULL) {
    text[got] = '\0';
    snprintf(c->path, sizeof(c->path), "%s", path);
  }
  if (text != NULL && capture_json_parse(text, c) == 0)
    out->n++;
  else
    out->unreadable++;
  free(text);
}

static void find(const char *dir, int depth, capture_files *out) {
  read_one(dir, out);
  if (depth == 2)
    return;
  DIR *d = opendir(dir);
  if (d == NULL)
    return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char child[512];
    struct stat sb;
    if (e->d_name[0] == '.' ||
        (size_t)snprintf(child, sizeof(child), "%s/%s", dir, e->d_name) >= sizeof(child) ||
        lstat(child, &sb) != 0 || !S_ISDIR(sb.st_mode))
      continue;
    find(child, depth + 1, out);
  }
  closedir(d);
}

void capture_files_find(const char *const *inputs, size_t n_inputs, capture_files *out) {
  out->n = out->unreadable = 0;
  for (size_t i = 0; i < n_inputs; i++)
    if (strncmp(inputs[i], "net://", 6) != 0)
      find(inputs[i], 0, out);
}
