/* Shared by every fuzz target: a failed invariant aborts with its text. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_target.h"

void fuzz_check_failed(const char *what, const char *file, int line) {
  fprintf(stderr, "%s:%d: invariant failed: %s\n", file, line, what);
  abort();
}
