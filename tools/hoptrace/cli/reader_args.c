/* The command line of export, report and view: every option checked and
 * refused with its reason, before anything is opened or read. */
#include "cli/reader_args.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/usage.h"
#include "read/limits.h"
#include "read/stream_split.h"
#include "read/trace_dirs.h"

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

int reader_args_parse(int argc, char **argv, const char *command, unsigned decoders,
                      reader_args *args) {
  pipeline_options *o = &args->o;
  ship_options *push = &args->push;
  *o = (pipeline_options){.grace_ns = 2000000000, .timeout_ns = 30000000000,
                          .decoders = decoders, .align = true,
                          .align_warmup_ns = 5000000000};
  *push = (ship_options){0};
  const char *path = strcmp(command, "view") == 0 ? "waterfall.html" : NULL;
  if (strcmp(command, "report") == 0)
    o->format = &output_report;
  if (strcmp(command, "view") == 0)
    o->format = &output_html;
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
      {"relay-dir", required_argument, NULL, 'r'}, {"snapshots", no_argument, NULL, 'Z'},
      {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
  int c, at;
  optind = 1;
  while ((c = getopt_long(argc, argv, "f:o:qh", longopts, &at)) != -1) {
    switch (c) {
    case 'f':
      if (strcmp(command, "report") == 0 && (strcmp(optarg, "text") == 0 ||
                                             strcmp(optarg, "json") == 0)) {
        o->format = optarg[0] == 'j' ? &output_report_json : &output_report;
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
      if ((o->format = format_named(optarg)) == NULL) {
        fprintf(stderr, "hoptrace: unknown format '%s' (zipkin, otlp, chrome)\n", optarg);
        return 2;
      }
      break;
    case 'o': path = optarg; break;
    case 't':
      if (parse_trace_id(optarg, o) != 0) {
        fprintf(stderr, "hoptrace: --trace-id wants 16 or 32 hex digits\n");
        return 2;
      }
      break;
    case 'F': o->follow = true; break;
    case 'A':
      if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0) {
        fprintf(stderr, "hoptrace: --align on|off\n");
        return 2;
      }
      o->align = strcmp(optarg, "on") == 0;
      break;
    case 'R': o->align_reference = optarg; break;
    case 'r': o->relay_dir = optarg; break;
    case 'g':
    case 'T':
    case 'W':
      if (parse_seconds(optarg, c == 'g' ? &o->grace_ns : c == 'T' ? &o->timeout_ns
                                                                  : &o->align_warmup_ns) != 0) {
        fprintf(stderr, "hoptrace: %s wants a number of seconds from 0 to 86400, not '%s'\n",
                c == 'g' ? "--grace" : c == 'T' ? "--timeout" : "--warmup", optarg);
        return 2;
      }
      o->timeout_given |= c == 'T';
      break;
    case 'D': {
      char *end;
      unsigned long n = strtoul(optarg, &end, 10);
      if (!isdigit((unsigned char)optarg[0]) || *end || n < 1 || n > STREAM_SPLIT_MAX_GROUPS) {
        fprintf(stderr, "hoptrace: --decoders wants 1 to %d\n", STREAM_SPLIT_MAX_GROUPS);
        return 2;
      }
      o->decoders = (unsigned)n;
      break;
    }
    case 'q': o->quiet = true; break;
    case 'a': o->all = true; break;
    case 'Z': bt_inputs_snapshots = true; break;
    case 'U': push->to = optarg; break;
    case 'P': push->format = optarg; break;
    case 'H': push->headers_file = optarg; break;
    case 'Y': push->allow_drops = true; break;
    case 'M':
    case 'S':
    case 'B':
    case 'G':
      if (parse_push_number(c, optarg, push) != 0)
        return 2;
      break;
    case 'L':
      if (limits_option(longopts[at].name, optarg) != 0)
        return 2;
      break;
    case 'h': hoptrace_usage(stdout); return 0;
    default: hoptrace_usage(stderr); return 2;
    }
  }
  if ((push->to || push->format || push->headers_file || push->allow_drops || push->queue_mib ||
       push->summary_every || push->retry_for || push->give_up_after) &&
      (strcmp(command, "export") != 0 || o->format || path || !push->to)) {
    fprintf(stderr, "hoptrace: --to URL belongs to export, without --format and -o "
                    "(--to-format, --headers-file, --allow-drops, --queue-mib, --summary-every, "
                    "--retry-for and --give-up-after go with it)\n");
    return 2;
  }
  push->quiet = o->quiet;
  push->interrupted = pipeline_interrupted;
  push->stop_run = o->follow ? pipeline_stop : NULL; /* a file input is read on, counted */
  if (push->to && (o->format = ship_output(push)) == NULL)
    return 2;
  if (o->format == NULL) {
    fprintf(stderr, "hoptrace export: --format zipkin|otlp|chrome is required\n");
    return 2;
  }
  if (optind >= argc) {
    hoptrace_usage(stderr);
    return 2;
  }
  o->inputs = (const char *const *)&argv[optind];
  o->n_inputs = (size_t)(argc - optind);
  bool live = strncmp(o->inputs[0], "net://", 6) == 0;
  for (size_t i = 1; i < o->n_inputs; i++)
    if ((strncmp(o->inputs[i], "net://", 6) == 0) != live) {
      fprintf(stderr, "hoptrace: inputs are all trace directories or all live URLs\n");
      return 2;
    }
  if (o->relay_dir != NULL && !live) {
    fprintf(stderr, "hoptrace: --relay-dir goes with a live input (net://...)\n");
    return 2;
  }
  if (o->follow && !live && o->filter_trace) {
    fprintf(stderr, "hoptrace: --follow of flight-recorder snapshots writes captured traces;"
                    " --trace-id goes without it\n");
    return 2;
  }
  args->path = path;
  args->live = live;
  return READER_ARGS_RUN;
}
