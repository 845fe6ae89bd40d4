/* Cost of recording one RPC hop with hoptrace, beside Blkin's figures.
 *   bench_recording hop|codec|traced|traced_kv|plain|plain_kv WARM N
 *       runs WARM + N hops, prints "hops WARM+N" and whether the provider
 *       is loaded
 *   bench_recording report FIGURES              writes the table
 *                                               (bench/results/recording.txt)
 * bench/recording/run.sh runs the hops in real LTTng sessions and under
 * callgrind, then the report. Not a test: no assertion on any figure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hoptrace/tracing.h"
#include "hops.h"
#include "table.h"

static int usage(void) {
  fputs("usage: bench_recording hop|codec|traced|traced_kv|plain|plain_kv WARM N\n"
        "       bench_recording report FIGURES\n", stderr);
  return 2;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "report") == 0)
    return table_write(argv[2]);
  if (argc != 4)
    return usage();
  unsigned warm = (unsigned)strtoul(argv[2], NULL, 10);
  unsigned n = (unsigned)strtoul(argv[3], NULL, 10);
  ht_tracing_init(); /* the static library's constructor is not linked in */
  if (strcmp(argv[1], "hop") == 0)
    hops_two_sided(warm, n);
  else if (strcmp(argv[1], "codec") == 0)
    hops_codec(warm, n);
  else if (strcmp(argv[1], "traced") == 0 || strcmp(argv[1], "plain") == 0 ||
           strcmp(argv[1], "traced_kv") == 0 || strcmp(argv[1], "plain_kv") == 0)
    hops_messenger(argv[1][0] == 't', strstr(argv[1], "_kv") != NULL, warm, n);
  else
    return usage();
  printf("hops %u\nprovider %s\n", warm + n,
         ht_tracing_provider_state() == HT_PROVIDER_LOADED ? "loaded" : "missing");
  return 0;
}
