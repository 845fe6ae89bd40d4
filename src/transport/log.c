/* Logging of the transport: formats a line and hands it to the sink the
 * options name (stderr by default). Must never allocate or block beyond
 * one formatted line; lines above the configured level cost one compare. */
#include <stdarg.h>
#include <stdio.h>

#include "transport/internal.h"

static const char *level_name(ht_log_level level) {
  switch (level) {
  case HT_LOG_ERROR: return "error";
  case HT_LOG_WARN: return "warn";
  case HT_LOG_INFO: return "info";
  default: return "debug";
  }
}

void ht_tr_log(const ht_messenger *m, ht_log_level level, const char *fmt, ...) {
  if (level > m->opts.log_level)
    return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  if (m->opts.log != NULL) {
    m->opts.log(m->opts.log_arg, level, line);
    return;
  }
  fprintf(stderr, "hoptrace[%s] %s: %s\n", m->name, level_name(level), line);
}
