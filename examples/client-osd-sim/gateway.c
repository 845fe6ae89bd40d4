/* sim-gateway: an HTTP object gateway in front of the simulated OSDs, as
 * Ceph's object gateway fronts RADOS.
 *
 *   sim-gateway --map FILE [--id N] [--bind ADDR] [--port N] [--ready-file F]
 *               [--max-body B] [--http-connections N] [--idle-timeout S]
 *               [--timeout-ms MS] [--messenger traced] [--sampler ...] ...
 *
 *   PUT /BUCKET/KEY (body: the object)  -> osd_write   200
 *   GET /BUCKET/KEY                     -> osd_read    200 + body, 404
 *   DELETE /BUCKET/KEY                  -> osd_delete  204
 *   (no live OSD 503, OSD timeout 504, body over --max-body 413)
 *
 * Each request is a server span (kind SERVER, named by its method) that
 * continues an incoming W3C traceparent, else a B3 `b3` header; its OSD
 * request is that span's child, so the trace runs on through the traced
 * messenger into the OSDs. A malformed header starts a new root and is
 * counted. The port goes to --ready-file once every OSD is connected.
 * SIGTERM/SIGINT: stop accepting, finish the running requests, print the
 * counts, exit 0.
 *
 * Never: hang (every OSD call is bounded by --timeout-ms), or exit 0 when
 * it could not serve. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"

#define W "sim-gateway"

typedef struct gw_args {
  const char *map_path, *ready_file;
  long id, port, max_body, conns, idle, timeout_ms;
  gw_http_cfg http;
  sim_common_opts common;
} gw_args;

static void usage(FILE *f) {
  fprintf(f, "usage: " W " --map FILE [options]\n"
             "  --id N                gateway id: service gateway.N (default 0)\n"
             "  --bind ADDR           IPv4 address to listen on (default 127.0.0.1)\n"
             "  --port N              HTTP port (default 0: any free one)\n"
             "  --ready-file F        the bound port is written there once serving\n"
             "  --max-body B          largest PUT body (default 1048576)\n"
             "  --http-connections N  HTTP connections at once (default 64)\n"
             "  --idle-timeout S      close an idle HTTP connection (default 10)\n"
             "  --timeout-ms MS       OSD request timeout (default 2000)\n"
             SIM_COMMON_USAGE);
}

static int parse_args(int argc, char **argv, gw_args *a) {
  static const struct option opts[] = {
      {"map", required_argument, NULL, 'm'},        {"id", required_argument, NULL, 'i'},
      {"bind", required_argument, NULL, 'B'},       {"port", required_argument, NULL, 'p'},
      {"ready-file", required_argument, NULL, 'r'}, {"max-body", required_argument, NULL, 'b'},
      {"http-connections", required_argument, NULL, 'c'},
      {"idle-timeout", required_argument, NULL, 'I'},
      {"timeout-ms", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'},
      SIM_COMMON_LONGOPTS,                          {0, 0, 0, 0}};
  a->id = 0, a->port = 0, a->max_body = 1 << 20, a->conns = 64, a->idle = 10;
  a->timeout_ms = 2000, a->http.bind = "127.0.0.1";
  int c, bad = 0;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (sim_common_option(&a->common, c, optarg))
      continue;
    switch (c) {
    case 'm': a->map_path = optarg; break;
    case 'i': bad |= sim_parse_long(W, "id", optarg, 0, 1000000, &a->id); break;
    case 'B': a->http.bind = optarg; break;
    case 'p': bad |= sim_parse_long(W, "port", optarg, 0, 65535, &a->port); break;
    case 'r': a->ready_file = optarg; break;
    case 'b': bad |= sim_parse_long(W, "max-body", optarg, 0, 8 << 20, &a->max_body); break;
    case 'c': bad |= sim_parse_long(W, "http-connections", optarg, 1, 1000, &a->conns); break;
    case 'I': bad |= sim_parse_long(W, "idle-timeout", optarg, 1, 3600, &a->idle); break;
    case 't': bad |= sim_parse_long(W, "timeout-ms", optarg, 1, 600000, &a->timeout_ms); break;
    case 'h': usage(stdout); exit(0);
    default: usage(stderr); return -1;
    }
  }
  if (optind < argc)
    fprintf(stderr, W ": unexpected argument '%s'\n", argv[optind]), bad = 1;
  if (a->map_path == NULL)
    fprintf(stderr, W ": --map FILE is required\n"), bad = 1;
  if (bad) {
    fprintf(stderr, "(" W " --help for the options)\n");
    return -1;
  }
  a->http.port = (unsigned)a->port, a->http.max_body = (size_t)a->max_body;
  a->http.max_conns = (unsigned)a->conns, a->http.idle_timeout = (unsigned)a->idle;
  return 0;
}

static int write_ready(const char *path, unsigned port) {
  char tmp[4096];
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (f == NULL || fprintf(f, "%u\n", port) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
    perror(W ": --ready-file");
    return -1;
  }
  return 0;
}

static void report(const char *name, gw_stats *s) {
  fprintf(stderr, "%s: %llu requests (2xx %llu, 4xx %llu, 5xx %llu); parents: traceparent %llu, "
                  "b3 %llu, new roots %llu; malformed traceparent %llu, malformed b3 %llu; "
                  "bodies too large %llu\n", name,
          (unsigned long long)s->requests, (unsigned long long)s->status_2xx,
          (unsigned long long)s->status_4xx, (unsigned long long)s->status_5xx,
          (unsigned long long)s->from_traceparent, (unsigned long long)s->from_b3,
          (unsigned long long)s->roots, (unsigned long long)s->bad_traceparent,
          (unsigned long long)s->bad_b3, (unsigned long long)s->too_large);
}

int main(int argc, char **argv) {
  static gw_args a;
  static gw_osd osd;
  static gw_stats st;
  static sim_log log;
  char name[32], err[256];
  if (parse_args(argc, argv, &a) != 0)
    return 2;
  snprintf(name, sizeof(name), "gateway.%ld", a.id);
  a.http.service = name;
  osd.timeout_ms = (uint32_t)a.timeout_ms;
  if (sim_map_load(&osd.map, a.map_path, err, sizeof(err)) != 0) {
    fprintf(stderr, "%s: %s\n", name, err);
    return 2;
  }
  /* only sigwait below sees SIGTERM/SIGINT */
  sigset_t stop;
  sim_block_stop_signals(&stop);
  if (sim_common_apply(&a.common, name) != 0 || sim_log_init(&log, &a.common, name) != 0)
    return 2;
  a.http.log = &log;
  gw_http *http = NULL;
  unsigned port = 0;
  int rc = gw_osd_open(&osd, &a.common, name, &log);
  if (rc == 0)
    rc = gw_http_start(&http, &a.http, &osd, &st, &port);
  if (rc == 0 && a.ready_file != NULL)
    rc = write_ready(a.ready_file, port);
  if (rc == 0) {
    fprintf(stderr, "%s: serving http://%s:%u (pid %d)\n", name, a.http.bind, port, (int)getpid());
    int sig;
    sigwait(&stop, &sig);
  }
  if (http != NULL)
    gw_http_stop(http); /* waits for the running requests */
  gw_osd_close(&osd);
  sim_log_finish(&log);
  report(name, &st);
  return rc == 0 ? 0 : 2;
}
