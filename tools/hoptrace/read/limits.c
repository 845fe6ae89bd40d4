/* The run's limits (limits.h): the defaults until the command line says. */
#include "read/limits.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

tool_limits ht_limits = TOOL_LIMITS_DEFAULT;
tool_drops ht_drops;

bool limits_dropped(void) {
  /* a complete trace written early is whole (a late span of it would
   * make a trace of its own, incomplete, counted) */
  return ht_drops.early_incomplete || ht_drops.trace_spans || ht_drops.names ||
         ht_drops.strings || ht_drops.page_traces || ht_drops.page_aggregate ||
         ht_drops.dedupe_unsure;
}

void limits_print_drops(FILE *out) {
  if (ht_drops.early_traces)
    fprintf(out, "hoptrace: %llu traces written before their grace ended (%llu of them"
                 " incomplete then, marked): more than %llu traces or %llu spans open at once"
                 " (--max-open-traces, --max-open-spans); a late span of one makes a trace"
                 " of its own, marked incomplete\n",
            (unsigned long long)ht_drops.early_traces,
            (unsigned long long)ht_drops.early_incomplete,
            (unsigned long long)ht_limits.open_traces, (unsigned long long)ht_limits.open_spans);
  if (ht_drops.trace_spans)
    fprintf(out, "hoptrace: %llu span events dropped past %llu spans in a trace"
                 " (--max-trace-spans); those traces are marked incomplete\n",
            (unsigned long long)ht_drops.trace_spans, (unsigned long long)ht_limits.trace_spans);
  if (ht_drops.names)
    fprintf(out, "hoptrace: %llu name table entries (desc/peer/process) not kept: more than"
                 " %llu entries or %llu MiB (--max-names), or an id no span can name\n",
            (unsigned long long)ht_drops.names, (unsigned long long)ht_limits.names,
            (unsigned long long)(ht_limits.name_bytes >> 20));
  if (ht_drops.strings)
    fprintf(out, "hoptrace: %llu strings cut to %llu bytes (--max-string)\n",
            (unsigned long long)ht_drops.strings, (unsigned long long)ht_limits.string_bytes);
  if (ht_drops.page_traces)
    fprintf(out, "hoptrace: %llu traces left out of the waterfall page: it holds at most"
                 " %llu MiB of traces (--max-page-mib)\n",
            (unsigned long long)ht_drops.page_traces,
            (unsigned long long)(ht_limits.page_bytes >> 20));
  if (ht_drops.page_aggregate)
    fprintf(out, "hoptrace: the aggregate critical path (%llu bytes) left out of the waterfall"
                 " page: it holds at most %llu MiB (--max-page-mib); `hoptrace report` has it\n",
            (unsigned long long)ht_drops.page_aggregate,
            (unsigned long long)(ht_limits.page_bytes >> 20));
  if (ht_drops.dedupe_unsure)
    fprintf(out, "hoptrace: %llu events of overlapping snapshots read after older events"
                 " were forgotten past %llu remembered (--max-open-spans): any copies among"
                 " them were not skipped (a span read twice is flagged"
                 " hoptrace.span_id.duplicate)\n",
            (unsigned long long)ht_drops.dedupe_unsure, (unsigned long long)ht_limits.open_spans);
}

int limits_option(const char *name, const char *value) {
  static const struct {
    const char *name;
    uint64_t *limit;
  } options[] = {{"max-open-traces", &ht_limits.open_traces},
                 {"max-open-spans", &ht_limits.open_spans},
                 {"max-trace-spans", &ht_limits.trace_spans},
                 {"max-names", &ht_limits.names},
                 {"max-string", &ht_limits.string_bytes},
                 {"max-page-mib", &ht_limits.page_bytes}};
  char *end;
  errno = 0;
  unsigned long long n = strtoull(value, &end, 10);
  for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
    if (strcmp(name, options[i].name) == 0) {
      if (!isdigit((unsigned char)value[0]) || *end != '\0' || errno != 0 || n < 1 ||
          n > ((uint64_t)1 << 40)) {
        fprintf(stderr, "hoptrace: --%s wants a count from 1 to 2^40, not '%s'\n", name, value);
        return -1;
      }
      *options[i].limit = options[i].limit == &ht_limits.page_bytes ? n << 20 : n;
      return 0;
    }
  fprintf(stderr, "hoptrace: no limit --%s\n", name);
  return -1;
}
