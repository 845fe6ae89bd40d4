/* sim_truth.h: one write() a line, O_APPEND, so processes sharing the
 * file never interleave within a line. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sim_truth.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int fd = -1;
static uint64_t slow_ns;

static void open_truth(void) {
  const char *path = getenv("SIM_TRUTH");
  if (path != NULL && *path != '\0') {
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
      fprintf(stderr, "sim: cannot open SIM_TRUTH=%s: truth not written\n", path);
  }
  const char *ms = getenv("SIM_TRUTH_SLOW_MS");
  if (ms != NULL && *ms != '\0')
    slow_ns = (uint64_t)strtoull(ms, NULL, 10) * 1000000ull;
}

int sim_truth_on(void) {
  pthread_once(&once, open_truth);
  return fd >= 0;
}

uint64_t sim_truth_slow_ns(void) {
  pthread_once(&once, open_truth);
  return slow_ns;
}

void sim_truth(const char *kind, const ht_trace_context *ctx, const char *who,
               long long value) {
  if (!sim_truth_on())
    return;
  char id[33] = "-";
  if (ctx != NULL && (ctx->trace_id_hi != 0 || ctx->trace_id_lo != 0))
    snprintf(id, sizeof(id), "%016llx%016llx", (unsigned long long)ctx->trace_id_hi,
             (unsigned long long)ctx->trace_id_lo);
  char line[256];
  int n = snprintf(line, sizeof(line), "%s %s %s %lld\n", kind, id, who, value);
  if (n > 0 && (size_t)n < sizeof(line) && write(fd, line, (size_t)n) != n)
    fprintf(stderr, "sim: a truth line was not written\n");
}
