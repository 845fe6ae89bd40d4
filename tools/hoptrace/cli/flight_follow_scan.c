/* Snapshot directories below followed inputs (flight_follow_scan.h).
 * Looks at directory entries and file sizes only. A snapshot is whole
 * when its writer says so (record --flight's mark), when a later
 * snapshot of its session exists (the session daemon takes one session's
 * snapshots one after the other; each session's newest number is kept in
 * a map, so this costs no walk of the known snapshots), when the
 * recorder has ended (its capture.json), or, for snapshots nobody marks
 * (a relay's), when its files have not changed for FOLLOW_STABLE_MS. */
#include "cli/flight_follow_scan.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/flight_follow.h"
#include "read/text_hash.h"
#include "read/trace_dirs.h"
#include "util/grow.h"

/* The end of the last component of path named as a snapshot, 0: none. */
static size_t snapshot_end(const char *path) {
  size_t found = 0;
  for (const char *p = path; *p != '\0';) {
    while (*p == '/')
      p++;
    size_t n = strcspn(p, "/");
    char part[256];
    if (n > 0 && n < sizeof(part)) {
      memcpy(part, p, n);
      part[n] = '\0';
      if (bt_is_snapshot_name(part))
        found = (size_t)(p - path) + n;
    }
    p += n;
  }
  return found;
}

/* The files of one trace directory: their count and bytes. */
static void trace_size(const char *dir, uint64_t *files, uint64_t *bytes) {
  DIR *d = opendir(dir);
  if (d == NULL)
    return;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char file[4096];
    struct stat sb;
    if (e->d_name[0] == '.' ||
        (size_t)snprintf(file, sizeof(file), "%s/%s", dir, e->d_name) >= sizeof(file))
      continue;
    if (stat(file, &sb) == 0 && S_ISREG(sb.st_mode)) {
      (*files)++;
      *bytes += (uint64_t)sb.st_size;
    }
  }
  closedir(d);
}

/* The known snapshot whose directory is trace's first end bytes (h their
 * hash), NULL; *k: how many known directories share h. by_dir holds the
 * k-th directory of hash h under (h, k), as its index + 1. */
static follow_snap *snap_known(const follow_scan *s, const char *trace, size_t end, uint64_t h,
                               uint64_t *k) {
  for (*k = 0;; (*k)++) {
    uintptr_t at = (uintptr_t)idmap_get(&s->by_dir, h, *k);
    if (at == 0)
      return NULL;
    follow_snap *f = &s->snaps[at - 1];
    if (strncmp(f->dir, trace, end) == 0 && f->dir[end] == '\0')
      return f;
  }
}

/* newest holds each session's newest known snapshot (index + 1) under
 * (the hash h of the session's directory, its rank among sessions of
 * that hash): a snapshot finds a later one of its session at once, not
 * by a walk of every known snapshot. f's session's, NULL: none yet; *k:
 * the rank it is (or is to be) kept under. */
static const follow_snap *newest_of(const follow_scan *s, const follow_snap *f, uint64_t h,
                                    uint64_t *k) {
  for (*k = 0;; (*k)++) {
    uintptr_t at = (uintptr_t)idmap_get(&s->newest, h, *k);
    if (at == 0)
      return NULL;
    const follow_snap *g = &s->snaps[at - 1];
    if (g->parent == f->parent && strncmp(g->dir, f->dir, f->parent) == 0)
      return g;
  }
}

/* The snapshot at index i is known now. 0, or -1 out of memory. */
static int note_newest(follow_scan *s, size_t i) {
  const follow_snap *f = &s->snaps[i];
  uint64_t h = text_hash(f->dir, f->parent), k;
  const follow_snap *g = newest_of(s, f, h, &k);
  return g != NULL && g->n >= f->n ? 0 : idmap_put(&s->newest, h, k, (void *)(uintptr_t)(i + 1));
}

/* A later snapshot of the same session is known. */
static bool has_later(const follow_scan *s, const follow_snap *f) {
  uint64_t k;
  const follow_snap *g = newest_of(s, f, text_hash(f->dir, f->parent), &k);
  return g != NULL && g->n > f->n;
}

static follow_snap *snap_for(follow_scan *s, const char *trace, size_t end) {
  uint64_t h = text_hash(trace, end), k;
  follow_snap *known = snap_known(s, trace, end, h, &k);
  if (known != NULL)
    return known;
  if (ht_grow(&s->snaps, &s->cap, s->n + 1, sizeof(follow_snap), 16) != 0)
    return NULL;
  follow_snap *f = &s->snaps[s->n];
  *f = (follow_snap){.dir = strndup(trace, end), .changed_ns = -1};
  if (f->dir == NULL)
    return NULL;
  const char *slash = strrchr(f->dir, '/');
  f->parent = slash != NULL ? (size_t)(slash - f->dir) : 0;
  const char *dash = strrchr(f->dir, '-');
  f->n = dash != NULL ? strtoull(dash + 1, NULL, 10) : 0;
  if (idmap_put(&s->by_dir, h, k, (void *)(uintptr_t)(s->n + 1)) != 0 ||
      note_newest(s, s->n) != 0) {
    idmap_remove(&s->by_dir, h, k);
    free(f->dir);
    return NULL;
  }
  s->n++;
  return f;
}

static int add_trace(follow_snap *f, const char *trace) {
  char **grown = realloc(f->traces, (f->n_traces + 1) * sizeof(char *));
  if (grown == NULL)
    return -1;
  f->traces = grown;
  if ((f->traces[f->n_traces] = strdup(trace)) == NULL)
    return -1;
  f->n_traces++;
  return 0;
}

static void forget_traces(follow_snap *f) {
  for (size_t i = 0; i < f->n_traces; i++)
    free(f->traces[i]);
  free(f->traces);
  f->traces = NULL;
  f->n_traces = 0;
}

static bool file_in(const char *dir, size_t len, const char *name) {
  char path[4096];
  struct stat sb;
  return (size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)len, dir, name) < sizeof(path) &&
         stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

bool follow_scan_ended(const char *const *inputs, size_t n_inputs) {
  for (size_t i = 0; i < n_inputs; i++)
    if (!file_in(inputs[i], strlen(inputs[i]), "capture.json"))
      return false;
  return n_inputs > 0;
}

int follow_scan_run(follow_scan *s, const char *const *inputs, size_t n_inputs, int64_t now_ns) {
  for (size_t i = 0; i < s->n; i++)
    if (!s->snaps[i].read)
      forget_traces(&s->snaps[i]);
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < n_inputs; i++) {
    char **dirs = NULL;
    size_t n = 0;
    rc = bt_find_trace_dirs(inputs[i], &dirs, &n, 0);
    for (size_t k = 0; k < n; k++) {
      size_t end = rc == 0 ? snapshot_end(dirs[k]) : 0;
      follow_snap *f = end > 0 ? snap_for(s, dirs[k], end) : NULL;
      if (rc == 0 && end == 0)
        s->not_snapshot = true;
      else if (rc == 0 && f == NULL)
        rc = TRACE_DIRS_NO_MEMORY;
      else if (rc == 0 && !f->read && add_trace(f, dirs[k]) != 0)
        rc = TRACE_DIRS_NO_MEMORY;
      free(dirs[k]);
    }
    free(dirs);
  }
  for (size_t i = 0; rc == 0 && i < s->n; i++) {
    follow_snap *f = &s->snaps[i];
    if (f->read || f->whole)
      continue;
    uint64_t files = 0, bytes = 0;
    for (size_t k = 0; k < f->n_traces; k++)
      trace_size(f->traces[k], &files, &bytes);
    if (f->changed_ns < 0 || files != f->files || bytes != f->bytes) {
      f->files = files;
      f->bytes = bytes;
      f->changed_ns = now_ns;
    }
    f->whole = file_in(f->dir, strlen(f->dir), FOLLOW_WRITTEN_MARK) ||
               file_in(f->dir, f->parent, "capture.json") || has_later(s, f) ||
               now_ns - f->changed_ns >= (int64_t)FOLLOW_STABLE_MS * 1000000;
  }
  return rc;
}

void follow_scan_free(follow_scan *s) {
  for (size_t i = 0; i < s->n; i++) {
    forget_traces(&s->snaps[i]);
    free(s->snaps[i].dir);
  }
  free(s->snaps);
  idmap_free(&s->by_dir);
  idmap_free(&s->newest);
  *s = (follow_scan){0};
}
