/* Where export, report and view write: the output checked against the
 * inputs, and -o FILE replaced only by a run that succeeded. */
#include "cli/output_target.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* path is dir or below it (both real paths); "" is nowhere */
static bool path_under(const char *path, const char *dir) {
  size_t n = strlen(dir);
  return path[0] != '\0' && strncmp(path, dir, n) == 0 &&
         (path[n] == '\0' || path[n] == '/' || n == 1);
}

int check_inputs(const pipeline_options *o, const char *path) {
  /* the output's directory, and where an existing output (a symlink)
   * really is */
  char out_dir[PATH_MAX] = "", out_real[PATH_MAX] = "";
  if (path != NULL) {
    char *copy = strdup(path);
    if (copy == NULL || realpath(dirname(copy), out_dir) == NULL) {
      fprintf(stderr, "hoptrace: %s: %s\n", path, strerror(copy ? errno : ENOMEM));
      free(copy);
      return 2;
    }
    free(copy);
    if (realpath(path, out_real) == NULL)
      out_real[0] = '\0';
  }
  for (size_t i = 0; i < o->n_inputs; i++) {
    char in[PATH_MAX];
    struct stat st;
    if (realpath(o->inputs[i], in) == NULL || stat(in, &st) != 0) {
      fprintf(stderr, "hoptrace: %s: %s: no CTF trace to read\n", o->inputs[i],
              strerror(errno));
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      fprintf(stderr, "hoptrace: %s: not a directory: no CTF trace to read\n", o->inputs[i]);
      return 1;
    }
    if (path != NULL && (path_under(out_dir, in) || path_under(out_real, in))) {
      fprintf(stderr,
              "hoptrace: the output %s lies inside the input trace directory %s: "
              "write it elsewhere\n", path, o->inputs[i]);
      return 2;
    }
  }
  return 0;
}

int target_open(target *t, bool direct) {
  struct stat st;
  bool exists = stat(t->path, &st) == 0;
  if (direct || (exists && !S_ISREG(st.st_mode))) {
    if ((t->file = fopen(t->path, "w")) == NULL) {
      fprintf(stderr, "hoptrace: %s: %s\n", t->path, strerror(errno));
      return -1;
    }
    return 0;
  }
  /* the mode fopen would give: an existing file's, else 0666 less umask */
  mode_t mode = exists ? st.st_mode & 07777 : 0;
  if (!exists) {
    mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  t->final = exists ? realpath(t->path, NULL) : strdup(t->path);
  char *d = t->final ? strdup(t->final) : NULL, *b = t->final ? strdup(t->final) : NULL;
  size_t len = t->final ? strlen(t->final) + 16 : 0;
  t->tmp = d && b ? malloc(len) : NULL;
  int fd = -1;
  if (t->tmp != NULL) {
    snprintf(t->tmp, len, "%s/.%s.XXXXXX", dirname(d), basename(b));
    fd = mkostemp(t->tmp, O_CLOEXEC);
  }
  int err = t->tmp == NULL ? ENOMEM : errno;
  free(d);
  free(b);
  if (fd < 0 || fchmod(fd, mode) != 0 || (t->file = fdopen(fd, "w")) == NULL) {
    if (fd >= 0) {
      err = errno;
      close(fd);
      unlink(t->tmp);
    }
    fprintf(stderr, "hoptrace: %s: cannot create a temporary file beside it: %s\n", t->path,
            strerror(err));
    free(t->tmp);
    free(t->final);
    return -1;
  }
  return 0;
}

int target_close(target *t, int rc) {
  int err = 0;
  /* written, whole or not: it replaces the old file */
  bool written = rc == 0 || rc == PIPELINE_NOT_WHOLE;
  /* the data on disk before the rename: a crash must not leave a
   * renamed but empty file */
  errno = 0;
  if (t->tmp != NULL && written && (fflush(t->file) != 0 || fsync(fileno(t->file)) != 0))
    err = errno != 0 ? errno : EIO;
  errno = 0;
  if (fclose(t->file) != 0 && err == 0)
    err = errno != 0 ? errno : EIO;
  if (err != 0 && written) {
    fprintf(stderr, "hoptrace: cannot write %s: %s\n", t->path, strerror(err));
    rc = 2;
    written = false;
  }
  if (t->tmp != NULL) {
    /* a signal caught after the run: the output may be whole, but the
     * run was asked to stop; it did, the old file stays */
    if (written && pipeline_interrupted() != 0) {
      fprintf(stderr, "hoptrace: interrupted: %s not written\n", t->path);
      rc = 128 + pipeline_interrupted();
      written = false;
    }
    if (written && rename(t->tmp, t->final) != 0) {
      err = errno; /* rename's own, before anything else runs */
      fprintf(stderr, "hoptrace: cannot rename the output to %s: %s\n", t->path,
              strerror(err));
      rc = 2;
      written = false;
    }
    if (!written)
      unlink(t->tmp);
    free(t->tmp);
    free(t->final);
  }
  return rc;
}
