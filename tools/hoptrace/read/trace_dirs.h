/* Finding the CTF traces below an input directory (trace_dirs.c). */
#ifndef HT_TOOL_TRACE_DIRS_H
#define HT_TOOL_TRACE_DIRS_H

#include <stddef.h>

/* Appends to *dirs every directory below `path` (or path itself) that
 * holds a CTF `metadata` file and some stream data; depth is 0 at the
 * input. 0, or -1 when out of memory or past 4096 traces. */
int bt_find_trace_dirs(const char *path, char ***dirs, size_t *n, int depth);

#endif
