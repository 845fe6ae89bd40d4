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
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hoptrace/version.h"

#include "cli/ctl.h"
#include "cli/diff_cmd.h"
#include "cli/pipeline.h"
#include "cli/record.h"
#include "read/limits.h"
#include "read/stream_split.h"
#include "ship/ship.h"


static void usage(FILE *out) {
  fputs("usage:\n"
        "  hoptrace export --format zipkin|otlp|chrome [options] INPUT...\n"
        "  hoptrace report [--format text|json] [options] INPUT...\n"
        "  hoptrace view [options] INPUT...       (writes waterfall.html by default)\n"
        "  hoptrace diff [--split p99|halves] [--format text|json] [options] A [B]\n"
        "                                         (hoptrace diff --help)\n"
        "  hoptrace record [-o DIR] [--live URL] [--name SESSION] [--filter EXPR]\n"
        "                  [--subbuf-size SIZE] [--num-subbuf N] -- COMMAND [ARG...]\n"
        "  hoptrace ctl [--timeout S] SOCKET status|sample RATIO|sampler KIND [k=v...]|set k=v...|trust-debug on|off [RATE]\n"
        "                   |flight on|off|capture-policy SPEC|capture [TRACE_ID]\n"
        "options of export, report and view:\n"
        "  -o, --output FILE   write there instead of stdout\n"
        "  --trace-id HEX      only this trace (16 or 32 hex digits)\n"
        "  --follow            live input: write each trace as soon as it is complete;\n"
        "                      a directory: follow the flight-recorder snapshots written\n"
        "                      into it, each captured trace written once settled\n"
        "  --relay-dir DIR     live input: the relay's output directory (lttng-relayd -o),\n"
        "                      readable here: when the session ends, events its files hold\n"
        "                      past the last one received are reported (exit 1)\n"
        "  --grace SECONDS     quiet time before a complete trace is written (default 2;\n"
        "                      following snapshots: after the last snapshot adding to it)\n"
        "  --timeout SECONDS   an incomplete trace is written after this (default 30;\n"
        "                      following snapshots: the run ends after this long\n"
        "                      without a new one, and never without --timeout)\n"
        "  --decoders N        processes decoding a trace directory's streams in\n"
        "                      parallel (default: one per CPU, at most 8; 1: none)\n"
        "  --align on|off      put every host on one clock, fitted from the RPCs between\n"
        "                      hosts (default on; only inputs with several hosts)\n"
        "  --align-reference HOST  the host whose clock the outputs use\n"
        "                      (default: the one with the most RPC partners)\n"
        "  --warmup SECONDS    live: traces wait at least this long for the first clock fit,\n"
        "                      until it aligns every host seen or 4x as long (default 5)\n"
        "  --all               flight-recorder snapshots: every trace they hold, not only\n"
        "                      the captured ones; a recording: also the traces recorded\n"
        "                      by a flight-mode process and not kept by its sampler\n"
        "  -q, --quiet         no summary on stderr\n"
        "  --max-open-traces N, --max-open-spans N, --max-trace-spans N, --max-names N,\n"
        "  --max-string BYTES, --max-page-mib N (view)\n"
        "                      the memory limits (README: Limits); past one, what is\n"
        "                      dropped is counted and the exit status is 3\n"
        "  --to URL|env        export: push the spans (OTLP/HTTP; `env`: OTEL_EXPORTER_OTLP_*)\n"
        "  --to-format otlp|otlp-json|zipkin  what --to sends (default otlp: protobuf)\n"
        "  --headers-file FILE --to: headers (key=value lines, e.g. authorization) from a\n"
        "                      file only you may read\n"
        "  --allow-drops       --to: exit 0 even when spans were not delivered\n"
        "  --queue-mib N       --to: the queue of batches holds at most N MiB (default 64)\n"
        "  --summary-every S   --to: a summary on stderr every S seconds\n"
        "  --retry-for S       --to: a batch is retried for at most S seconds (default 60)\n"
        "  --give-up-after S   --to: no batch accepted for S seconds of posting: the collector\n"
        "                      is taken for dead, the rest counted unsent, exit 2 (default 120,\n"
        "                      0: never)\n"
        "INPUT: directories holding LTTng traces, or net://HOST/host/HOSTNAME/SESSION URLs\n",
        out);
}

/* Exactly 16 or 32 hex digits: no sign, no 0x, no spaces (strtoull
 * alone takes all three). */
static int parse_trace_id(const char *text, pipeline_options *o) {
  size_t len = strlen(text);
  if (len != 16 && len != 32)
    return -1;
  for (size_t i = 0; i < len; i++)
    if (!isxdigit((unsigned char)text[i]))
      return -1;
  char hi[17] = "0", lo[17];
  if (len == 32) {
    memcpy(hi, text, 16);
    hi[16] = '\0';
  }
  memcpy(lo, text + len - 16, 16);
  lo[16] = '\0';
  char *end;
  o->trace_hi = strtoull(hi, &end, 16);
  if (*end)
    return -1;
  o->trace_lo = strtoull(lo, &end, 16);
  if (*end)
    return -1;
  o->filter_trace = true;
  return 0;
}

/* A finite number of seconds from 0 to 86400 (nan, inf, a sign of minus,
 * leading spaces refused: the cast below is then always defined). */
static int parse_seconds(const char *text, int64_t *ns) {
  if (!isdigit((unsigned char)text[0]) && text[0] != '.')
    return -1;
  char *end;
  errno = 0;
  double s = strtod(text, &end);
  if (*end || end == text || errno == ERANGE || !isfinite(s) || s < 0 || s > 86400)
    return -1;
  *ns = (int64_t)(s * 1e9);
  return 0;
}

/* --queue-mib 1..4096, --summary-every 1..86400, --retry-for 1..3600,
 * --give-up-after 0..86400 (0: never). */
static int parse_push_number(int opt, const char *text, ship_options *push) {
  const char *name = opt == 'M'   ? "--queue-mib"
                     : opt == 'S' ? "--summary-every"
                     : opt == 'G' ? "--give-up-after"
                                  : "--retry-for";
  long min = opt == 'G' ? 0 : 1;
  long max = opt == 'M' ? 4096 : opt == 'B' ? 3600 : 86400;
  char *end;
  errno = 0;
  long n = strtol(text, &end, 10);
  if (!isdigit((unsigned char)text[0]) || *end || errno == ERANGE || n < min || n > max) {
    fprintf(stderr, "hoptrace: %s wants a whole number from %ld to %ld, not '%s'\n", name, min,
            max, text);
    return -1;
  }
  if (opt == 'G')
    push->give_up_after = n == 0 ? -1 : (int)n;
  else
    *(opt == 'M' ? &push->queue_mib : opt == 'S' ? &push->summary_every : &push->retry_for) =
        (int)n;
  return 0;
}

static const output_format *format_named(const char *name) {
  if (strcmp(name, "zipkin") == 0) return &output_zipkin;
  if (strcmp(name, "otlp") == 0) return &output_otlp;
  if (strcmp(name, "chrome") == 0) return &output_chrome;
  return NULL;
}

/* One decoder per CPU: the reading process merges and assembles while
 * they decode (it needs far less than a decoder). */
static unsigned default_decoders(void) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1)
    return 1;
  return cpus > STREAM_SPLIT_MAX_GROUPS ? STREAM_SPLIT_MAX_GROUPS : (unsigned)cpus;
}

/* path is dir or below it (both real paths); "" is nowhere */
static bool path_under(const char *path, const char *dir) {
  size_t n = strlen(dir);
  return path[0] != '\0' && strncmp(path, dir, n) == 0 &&
         (path[n] == '\0' || path[n] == '/' || n == 1);
}

/* Every input directory exists (its error, not a truncated output), and
 * the output does not lie inside one (it would be read, or overwrite a
 * stream): 0, 1 (input) or 2 (output). */
static int check_inputs(const pipeline_options *o, const char *path) {
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

static int target_open(target *t, bool direct) {
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

/* Closes the output: renames the temporary file on success, removes it
 * otherwise. The run's status, or 2 when closing or renaming failed. */
static int target_close(target *t, int rc) {
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
  pipeline_options o = {.grace_ns = 2000000000, .timeout_ns = 30000000000,
                        .decoders = default_decoders(), .align = true,
                        .align_warmup_ns = 5000000000};
  const char *path = strcmp(command, "view") == 0 ? "waterfall.html" : NULL;
  if (strcmp(command, "report") == 0)
    o.format = &output_report;
  if (strcmp(command, "view") == 0)
    o.format = &output_html;
  static const struct option longopts[] = {
      {"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
      {"trace-id", required_argument, NULL, 't'}, {"follow", no_argument, NULL, 'F'},
      {"grace", required_argument, NULL, 'g'}, {"timeout", required_argument, NULL, 'T'},
      {"decoders", required_argument, NULL, 'D'}, {"quiet", no_argument, NULL, 'q'},
      {"align", required_argument, NULL, 'A'}, {"align-reference", required_argument, NULL, 'R'},
      {"warmup", required_argument, NULL, 'W'}, {"all", no_argument, NULL, 'a'},
      {"to", required_argument, NULL, 'U'}, {"to-format", required_argument, NULL, 'P'},
      {"headers-file", required_argument, NULL, 'H'},
      {"allow-drops", no_argument, NULL, 'Y'}, {"queue-mib", required_argument, NULL, 'M'},
      {"summary-every", required_argument, NULL, 'S'}, {"retry-for", required_argument, NULL, 'B'},
      {"max-open-traces", required_argument, NULL, 'L'},
      {"max-open-spans", required_argument, NULL, 'L'},
      {"max-trace-spans", required_argument, NULL, 'L'},
      {"max-names", required_argument, NULL, 'L'}, {"max-string", required_argument, NULL, 'L'},
      {"give-up-after", required_argument, NULL, 'G'},
      {"max-page-mib", required_argument, NULL, 'L'},
      {"relay-dir", required_argument, NULL, 'r'},
      {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
  ship_options push = {0};
  int c, at;
  optind = 1;
  while ((c = getopt_long(argc, argv, "f:o:qh", longopts, &at)) != -1) {
    switch (c) {
    case 'f':
      if (strcmp(command, "report") == 0 && (strcmp(optarg, "text") == 0 ||
                                             strcmp(optarg, "json") == 0)) {
        o.format = optarg[0] == 'j' ? &output_report_json : &output_report;
        break;
      }
      if (strcmp(command, "report") == 0) {
        fprintf(stderr, "hoptrace report: unknown format '%s' (text, json)\n", optarg);
        return 2;
      }
      if (strcmp(command, "export") != 0) {
        fprintf(stderr, "hoptrace %s: --format is an option of export and report only\n", command);
        return 2;
      }
      if ((o.format = format_named(optarg)) == NULL) {
        fprintf(stderr, "hoptrace: unknown format '%s' (zipkin, otlp, chrome)\n", optarg);
        return 2;
      }
      break;
    case 'o': path = optarg; break;
    case 't':
      if (parse_trace_id(optarg, &o) != 0) {
        fprintf(stderr, "hoptrace: --trace-id wants 16 or 32 hex digits\n");
        return 2;
      }
      break;
    case 'F': o.follow = true; break;
    case 'A':
      if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0) {
        fprintf(stderr, "hoptrace: --align on|off\n");
        return 2;
      }
      o.align = strcmp(optarg, "on") == 0;
      break;
    case 'R': o.align_reference = optarg; break;
    case 'r': o.relay_dir = optarg; break;
    case 'g':
    case 'T':
    case 'W':
      if (parse_seconds(optarg, c == 'g' ? &o.grace_ns : c == 'T' ? &o.timeout_ns
                                                                  : &o.align_warmup_ns) != 0) {
        fprintf(stderr, "hoptrace: %s wants a number of seconds from 0 to 86400, not '%s'\n",
                c == 'g' ? "--grace" : c == 'T' ? "--timeout" : "--warmup", optarg);
        return 2;
      }
      o.timeout_given |= c == 'T';
      break;
    case 'D': {
      char *end;
      unsigned long n = strtoul(optarg, &end, 10);
      if (!isdigit((unsigned char)optarg[0]) || *end || n < 1 || n > STREAM_SPLIT_MAX_GROUPS) {
        fprintf(stderr, "hoptrace: --decoders wants 1 to %d\n", STREAM_SPLIT_MAX_GROUPS);
        return 2;
      }
      o.decoders = (unsigned)n;
      break;
    }
    case 'q': o.quiet = true; break;
    case 'a': o.all = true; break;
    case 'U': push.to = optarg; break;
    case 'P': push.format = optarg; break;
    case 'H': push.headers_file = optarg; break;
    case 'Y': push.allow_drops = true; break;
    case 'M':
    case 'S':
    case 'B':
    case 'G':
      if (parse_push_number(c, optarg, &push) != 0)
        return 2;
      break;
    case 'L':
      if (limits_option(longopts[at].name, optarg) != 0)
        return 2;
      break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if ((push.to || push.format || push.headers_file || push.allow_drops || push.queue_mib ||
       push.summary_every || push.retry_for || push.give_up_after) &&
      (strcmp(command, "export") != 0 || o.format || path || !push.to)) {
    fprintf(stderr, "hoptrace: --to URL belongs to export, without --format and -o "
                    "(--to-format, --headers-file, --allow-drops, --queue-mib, --summary-every, "
                    "--retry-for and --give-up-after go with it)\n");
    return 2;
  }
  push.quiet = o.quiet;
  push.interrupted = pipeline_interrupted;
  push.stop_run = o.follow ? pipeline_stop : NULL; /* a file input is read on, counted */
  if (push.to && (o.format = ship_output(&push)) == NULL)
    return 2;
  if (o.format == NULL) {
    fprintf(stderr, "hoptrace export: --format zipkin|otlp|chrome is required\n");
    return 2;
  }
  if (optind >= argc) {
    usage(stderr);
    return 2;
  }
  o.inputs = (const char *const *)&argv[optind];
  o.n_inputs = (size_t)(argc - optind);
  int live = strncmp(o.inputs[0], "net://", 6) == 0;
  for (size_t i = 1; i < o.n_inputs; i++)
    if ((strncmp(o.inputs[i], "net://", 6) == 0) != live) {
      fprintf(stderr, "hoptrace: inputs are all trace directories or all live URLs\n");
      return 2;
    }
  if (o.relay_dir != NULL && !live) {
    fprintf(stderr, "hoptrace: --relay-dir goes with a live input (net://...)\n");
    return 2;
  }
  if (o.follow && !live && o.filter_trace) {
    fprintf(stderr, "hoptrace: --follow of flight-recorder snapshots writes captured traces;"
                    " --trace-id goes without it\n");
    return 2;
  }
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
  int rc = live ? 0 : check_inputs(&o, path);
  if (rc != 0)
    return rc;
  /* from here a signal ends the run through its cleanup (the temporary
   * file removed) instead of killing the process */
  pipeline_catch_signals();
  target t = {.path = path};
  o.out = stdout;
  o.out_name = "standard output";
  if (path != NULL) {
    if (target_open(&t, o.follow) != 0)
      return 2;
    o.out = t.file;
    o.out_name = path;
  }
  /* One thread writes the output: stdio's per-call locking was a tenth of
   * an export's time. A big buffer outside --follow (which flushes each
   * trace as it is written). */
  __fsetlocking(o.out, FSETLOCKING_BYCALLER);
  if (!o.follow)
    setvbuf(o.out, NULL, _IOFBF, (size_t)1 << 18);
  rc = pipeline_run(&o);
  if (push.to)
    rc = ship_exit_status(rc);
  if (path != NULL)
    rc = target_close(&t, rc);
  if ((rc == 0 || rc == PIPELINE_NOT_WHOLE) && path != NULL && !o.quiet)
    fprintf(stderr, "hoptrace: wrote %s%s\n", path,
            rc == PIPELINE_NOT_WHOLE ? " (not whole: a limit dropped part of it)" : "");
  return rc;
}

int main(int argc, char **argv) {
  reserve_std_fds();
  if (argc < 2) {
    usage(stderr);
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
    usage(stdout);
    return 0;
  }
  fprintf(stderr, "hoptrace: unknown command '%s'\n", command);
  usage(stderr);
  return 2;
}
