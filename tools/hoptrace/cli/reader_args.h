/* The command line of export, report and view (reader_args.c). */
#ifndef HT_TOOL_READER_ARGS_H
#define HT_TOOL_READER_ARGS_H

#include <stdbool.h>

#include "cli/pipeline.h"
#include "ship/ship.h"

typedef struct reader_args {
  pipeline_options o; /* inputs: in argv */
  ship_options push;  /* --to and its options */
  const char *path;   /* -o (view: waterfall.html), NULL: standard output */
  bool live;          /* the inputs are live URLs */
} reader_args;

/* reader_args_parse: the command line is good, run it. */
#define READER_ARGS_RUN (-1)

/* Parses argv (argv[0]: the command, "export", "report" or "view") into
 * args; decoders: --decoders' default. READER_ARGS_RUN, or the exit
 * status: 0 after --help, 2 for a bad command line (why on stderr). With
 * --to, the push's configuration is loaded here (ship_output). */
int reader_args_parse(int argc, char **argv, const char *command, unsigned decoders,
                      reader_args *args);

#endif
