/* hoptrace: LTTng sessions of hoptrace events -> spans, views, numbers.
 *
 *   hoptrace export --format zipkin|otlp|chrome [options] INPUT...
 *   hoptrace report [options] INPUT...
 *   hoptrace view [options] INPUT...         (-o waterfall.html)
 *   hoptrace diff [options] A B | --split p99|halves A
 *   hoptrace record [-o DIR] [--live URL] [channel options] -- COMMAND...
 *
 * INPUT is a trace directory (any directory holding LTTng CTF traces,
 * e.g. a session's or a relay's output) or net://HOST/host/HOSTNAME/SESSION
 * for a live session served by lttng-relayd; several INPUTs (all
 * directories or all live URLs) are read as one, e.g. every host's
 * session of a cluster. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <unistd.h>

#include "hoptrace/version.h"

#include "cli/ctl.h"
#include "cli/diff_cmd.h"
#include "cli/output_target.h"
#include "cli/pipeline.h"
#include "cli/reader_args.h"
#include "cli/record.h"
#include "cli/usage.h"
#include "read/stream_split.h"
#include "ship/ship.h"

/* One decoder per CPU: the reading process merges and assembles while
 * they decode (it needs far less than a decoder). */
static unsigned default_decoders(void) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1)
    return 1;
  return cpus > STREAM_SPLIT_MAX_GROUPS ? STREAM_SPLIT_MAX_GROUPS : (unsigned)cpus;
}

/* Standard descriptors the caller closed (`>&-`) are taken by
 * /dev/null: a later socket or file would take their number, and the
 * output meant for stdout would go into a decoder's socket. */
static bool stdout_closed;
static void reserve_std_fds(void) {
  for (int fd = 0; fd <= 2; fd++) {
    if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
      continue;
    if (fd == 1)
      stdout_closed = true;
    int got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got >= 0 && got != fd)
      close(got);
  }
}

static int run_reader(int argc, char **argv, const char *command) {
  reader_args args;
  int rc = reader_args_parse(argc, argv, command, default_decoders(), &args);
  if (rc != READER_ARGS_RUN)
    return rc;
  pipeline_options *o = &args.o;
  const char *path = args.path;
  if (path != NULL && strcmp(path, "-") == 0)
    path = NULL;
  if (path == NULL && stdout_closed) {
    fprintf(stderr, "hoptrace: standard output is closed: nowhere to write (use -o FILE)\n");
    return 2;
  }
  /* a reader that went away (`| head`) is a write error (EPIPE) the run
   * reports and cleans up after, not a signal that kills it */
  signal(SIGPIPE, SIG_IGN);
  /* the input first: a bad input must not cost an existing output file */
  rc = args.live ? 0 : check_inputs(o, path);
  if (rc != 0)
    return rc;
  /* from here a signal ends the run through its cleanup (the temporary
   * file removed) instead of killing the process */
  pipeline_catch_signals();
  target t = {.path = path};
  o->out = stdout;
  o->out_name = "standard output";
  if (path != NULL) {
    if (target_open(&t, o->follow) != 0)
      return 2;
    o->out = t.file;
    o->out_name = path;
  }
  /* One thread writes the output: stdio's per-call locking was a tenth of
   * an export's time. A big buffer outside --follow (which flushes each
   * trace as it is written). */
  __fsetlocking(o->out, FSETLOCKING_BYCALLER);
  if (!o->follow)
    setvbuf(o->out, NULL, _IOFBF, (size_t)1 << 18);
  rc = pipeline_run(o);
  if (args.push.to)
    rc = ship_exit_status(rc);
  if (path != NULL)
    rc = target_close(&t, rc);
  if ((rc == 0 || rc == PIPELINE_NOT_WHOLE) && path != NULL && !o->quiet)
    fprintf(stderr, "hoptrace: wrote %s%s\n", path,
            rc == PIPELINE_NOT_WHOLE ? " (not whole: a limit dropped part of it)" : "");
  return rc;
}

int main(int argc, char **argv) {
  reserve_std_fds();
  if (argc < 2) {
    hoptrace_usage(stderr);
    return 2;
  }
  const char *command = argv[1];
  if (strcmp(command, "export") == 0 || strcmp(command, "report") == 0 ||
      strcmp(command, "view") == 0)
    return run_reader(argc - 1, argv + 1, command);
  if (strcmp(command, "diff") == 0)
    return diff_main(argc - 1, argv + 1, default_decoders());
  if (strcmp(command, "record") == 0)
    return record_main(argc - 1, argv + 1);
  if (strcmp(command, "ctl") == 0)
    return ctl_main(argc - 1, argv + 1);
  if (strcmp(command, "--version") == 0 || strcmp(command, "version") == 0) {
    printf("hoptrace %s\n", HT_VERSION_STRING);
    return 0;
  }
  if (strcmp(command, "help") == 0 || strcmp(command, "--help") == 0 ||
      strcmp(command, "-h") == 0) {
    hoptrace_usage(stdout);
    return 0;
  }
  fprintf(stderr, "hoptrace: unknown command '%s'\n", command);
  hoptrace_usage(stderr);
  return 2;
}
