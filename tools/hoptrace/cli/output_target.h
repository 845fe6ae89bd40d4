/* Where export, report and view write (output_target.c). */
#ifndef HT_TOOL_OUTPUT_TARGET_H
#define HT_TOOL_OUTPUT_TARGET_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/pipeline.h"

/* Every input directory exists (its error, not a truncated output), and
 * the output (path, NULL: standard output) does not lie inside one (it
 * would be read, or overwrite a stream): 0, 1 (input) or 2 (output). */
int check_inputs(const pipeline_options *o, const char *path);

/* -o FILE. A regular file (or a new one) is written to a temporary file
 * beside it and renamed over it only when the run succeeded: an
 * interrupted or failed run leaves the old file as it was, and never a
 * complete-looking one. Anything else (/dev/full, a FIFO, a terminal), and
 * --follow (whose file is read while it grows), is written directly. */
typedef struct target {
  const char *path; /* the user's name */
  char *final;      /* where it is renamed to (a symlink's target) */
  char *tmp;        /* NULL: written directly */
  FILE *file;
} target;

/* Opens t->path (direct: written in place). 0, or -1 (why on stderr). */
int target_open(target *t, bool direct);

/* Closes the output: renames the temporary file on success, removes it
 * otherwise. The run's status, or 2 when closing or renaming failed. */
int target_close(target *t, int rc);

#endif
