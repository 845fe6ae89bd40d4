/* `hoptrace diff` (diff_cmd.h): reads each recording through the
 * pipeline into a diff_set, compares, writes. */
#include "cli/diff_cmd.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/pipeline.h"
#include "diff/diff_print.h"
#include "diff/diff_stats.h"
#include "read/stream_split.h"

#define DEFAULT_RESAMPLES 1000
#define DEFAULT_SEED 1

/* The format the pipeline writes through: it keeps each trace. */
struct output {
  diff_set *set;
};

static output *keep_open(obuf *out, const output_info *info) {
  (void)out;
  output *o = malloc(sizeof(*o));
  if (o != NULL)
    o->set = info->user;
  return o;
}

static void keep_trace(output *o, const trace *t) { diff_set_add(o->set, t); }

static int keep_close(output *o, const bt_source_stats *src, const assembler_stats *st) {
  (void)src;
  (void)st;
  free(o);
  return 0;
}

static const output_format keep_format = {"diff", keep_open, keep_trace, keep_close};

static void usage(FILE *f) {
  fputs("usage: hoptrace diff [options] A B        A against B (two recordings)\n"
        "       hoptrace diff --split p99 [options] A    its slowest 1 % against the rest\n"
        "       hoptrace diff --split halves [options] A its two halves (by trace id)\n"
        "options:\n"
        "  --split pNN|halves  one recording: traces at or above the NNth percentile of\n"
        "                      their operation's end-to-end time (B) against the rest (A);\n"
        "                      halves: odd trace ids (B) against even ones (A)\n"
        "  --format text|json  (default text)\n"
        "  -o, --output FILE   write there instead of stdout\n"
        "  --resamples N       bootstrap resamples (default 1000, at most 100000)\n"
        "  --seed N            the bootstrap's seed (default 1)\n"
        "  --decoders N, --align on|off   as report's\n"
        "  -q, --quiet         no counts on stderr\n",
        f);
}

static int read_recording(const char *dir, diff_set *set, const pipeline_options *base) {
  pipeline_options o = *base;
  const char *inputs[1] = {dir};
  o.inputs = inputs;
  o.n_inputs = 1;
  o.format = &keep_format;
  o.format_user = set;
  o.out = stdout;
  o.out_name = "standard output";
  o.quiet = true;
  int rc = pipeline_run(&o);
  if (rc != 0 && rc != PIPELINE_NOT_WHOLE)
    return rc;
  if (!base->quiet)
    fprintf(stderr,
            "hoptrace diff: %s: %zu traces (%llu without a root of non-zero time, %llu not kept)\n",
            dir, set->n, (unsigned long long)set->no_root, (unsigned long long)set->dropped);
  return set->dropped ? PIPELINE_NOT_WHOLE : rc;
}

static int parse_u64(const char *text, unsigned long long max, unsigned long long *v) {
  char *end;
  errno = 0;
  *v = strtoull(text, &end, 10);
  return isdigit((unsigned char)text[0]) && *end == '\0' && errno == 0 && *v <= max ? 0 : -1;
}

/* "p99", "p99.9", "p50": the quantile, else -1. */
static double parse_split(const char *text) {
  char *end;
  if (text[0] != 'p' || !isdigit((unsigned char)text[1]))
    return -1;
  double q = strtod(text + 1, &end);
  return *end == '\0' && q > 0 && q < 100 ? q / 100 : -1;
}

typedef struct run {
  const char *split; /* NULL: two recordings */
  double q;
  bool json;
  const char *path;
  unsigned long long resamples, seed;
  pipeline_options base;
} run;

static int compare_and_write(const run *u, char **dirs, diff_set *sets, FILE *out) {
  diff_view a, b;
  int rc = 0;
  if (u->split == NULL)
    rc = diff_view_all(&sets[0], &a) | diff_view_all(&sets[1], &b);
  else if (strcmp(u->split, "halves") == 0)
    rc = diff_view_split_halves(&sets[0], &a, &b);
  else
    rc = diff_view_split_tail(&sets[0], u->q, &a, &b);
  diff_result r;
  if (rc != 0 || diff_compare(&a, &b, (unsigned)u->resamples, u->seed, &r) != 0) {
    diff_view_free(&a);
    diff_view_free(&b);
    fprintf(stderr, "hoptrace diff: out of memory\n");
    return 1;
  }
  char la[4200], lb[4200];
  if (u->split == NULL) {
    snprintf(la, sizeof(la), "%s", dirs[0]);
    snprintf(lb, sizeof(lb), "%s", dirs[1]);
  } else if (strcmp(u->split, "halves") == 0) {
    snprintf(la, sizeof(la), "the traces of %s with an even id", dirs[0]);
    snprintf(lb, sizeof(lb), "the traces of %s with an odd id", dirs[0]);
  } else {
    snprintf(la, sizeof(la), "the rest of %s", dirs[0]);
    snprintf(lb, sizeof(lb), "the traces of %s at or above %s of their operation", dirs[0],
             u->split);
  }
  diff_side_info ia = {la, a.set, a.n}, ib = {lb, b.set, b.n};
  obuf *ob = obuf_new(out);
  if (ob != NULL) {
    (u->json ? diff_print_json : diff_print_text)(&r, &ia, &ib, ob);
    if (obuf_flush(ob) != 0 || fflush(out) != 0) {
      fprintf(stderr, "hoptrace diff: cannot write the output: %s\n", strerror(errno));
      rc = 2;
    }
    obuf_free(ob);
  } else {
    rc = 1;
  }
  diff_result_free(&r);
  diff_view_free(&a);
  diff_view_free(&b);
  return rc;
}

static int parse(int argc, char **argv, run *u) {
  static const struct option longopts[] = {
      {"split", required_argument, NULL, 's'}, {"format", required_argument, NULL, 'f'},
      {"output", required_argument, NULL, 'o'}, {"resamples", required_argument, NULL, 'r'},
      {"seed", required_argument, NULL, 'S'}, {"decoders", required_argument, NULL, 'D'},
      {"align", required_argument, NULL, 'A'}, {"quiet", no_argument, NULL, 'q'},
      {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
  int c;
  unsigned long long n;
  optind = 1;
  while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
    switch (c) {
    case 's':
      u->split = optarg;
      if (strcmp(optarg, "halves") != 0 && (u->q = parse_split(optarg)) < 0) {
        fprintf(stderr, "hoptrace diff: --split wants pNN (p99, p99.9) or halves, not '%s'\n",
                optarg);
        return 2;
      }
      break;
    case 'f':
      if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0) {
        fprintf(stderr, "hoptrace diff: unknown format '%s' (text, json)\n", optarg);
        return 2;
      }
      u->json = optarg[0] == 'j';
      break;
    case 'o': u->path = strcmp(optarg, "-") == 0 ? NULL : optarg; break;
    case 'r':
      if (parse_u64(optarg, DIFF_RESAMPLES_MAX, &u->resamples) != 0 || u->resamples < 100) {
        fprintf(stderr, "hoptrace diff: --resamples wants 100 to %d\n", DIFF_RESAMPLES_MAX);
        return 2;
      }
      break;
    case 'S':
      if (parse_u64(optarg, UINT64_MAX, &u->seed) != 0) {
        fprintf(stderr, "hoptrace diff: --seed wants a whole number\n");
        return 2;
      }
      break;
    case 'D':
      if (parse_u64(optarg, STREAM_SPLIT_MAX_GROUPS, &n) != 0 || n < 1) {
        fprintf(stderr, "hoptrace diff: --decoders wants 1 to %d\n", STREAM_SPLIT_MAX_GROUPS);
        return 2;
      }
      u->base.decoders = (unsigned)n;
      break;
    case 'A':
      if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0) {
        fprintf(stderr, "hoptrace diff: --align on|off\n");
        return 2;
      }
      u->base.align = strcmp(optarg, "on") == 0;
      break;
    case 'q': u->base.quiet = true; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  int want = u->split ? 1 : 2;
  if (argc - optind != want) {
    fprintf(stderr, "hoptrace diff: %s\n",
            u->split ? "--split compares one recording: one trace directory"
                     : "two trace directories to compare (or --split and one)");
    usage(stderr);
    return 2;
  }
  for (int i = optind; i < argc; i++)
    if (strncmp(argv[i], "net://", 6) == 0) {
      fprintf(stderr, "hoptrace diff: %s: diff reads recordings (trace directories)\n", argv[i]);
      return 2;
    }
  return -1;
}

int diff_main(int argc, char **argv, unsigned decoders) {
  run u = {.resamples = DEFAULT_RESAMPLES, .seed = DEFAULT_SEED,
           .base = {.grace_ns = 2000000000, .timeout_ns = 30000000000, .decoders = decoders,
                    .align = true, .align_warmup_ns = 5000000000}};
  int rc = parse(argc, argv, &u);
  if (rc >= 0)
    return rc;
  char **dirs = &argv[optind];
  diff_keys keys;
  diff_keys_init(&keys);
  diff_set sets[2];
  diff_set_init(&sets[0], &keys);
  diff_set_init(&sets[1], &keys);
  pipeline_catch_signals();
  int n = u.split ? 1 : 2, whole = 1;
  rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    rc = read_recording(dirs[i], &sets[i], &u.base);
    whole &= rc != PIPELINE_NOT_WHOLE;
    rc = rc == PIPELINE_NOT_WHOLE ? 0 : rc;
  }
  FILE *out = stdout;
  if (rc == 0 && u.path != NULL && (out = fopen(u.path, "w")) == NULL) {
    fprintf(stderr, "hoptrace diff: %s: %s\n", u.path, strerror(errno));
    rc = 2;
  }
  if (rc == 0)
    rc = compare_and_write(&u, dirs, sets, out);
  if (out != NULL && out != stdout && fclose(out) != 0 && rc == 0) {
    fprintf(stderr, "hoptrace diff: %s: %s\n", u.path, strerror(errno));
    rc = 2;
  }
  diff_set_free(&sets[0]);
  diff_set_free(&sets[1]);
  diff_keys_free(&keys);
  return rc == 0 && !whole ? PIPELINE_NOT_WHOLE : rc;
}
