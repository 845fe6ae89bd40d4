/* sim-client: the workload generator of the simulated cluster.
 *
 *   sim-client --id N --map FILE [--duration S] [--inflight N | --rate R]
 *              [--objects N] [--read-pct P] [--stat-pct P] [--delete-pct P]
 *              [--size-min B] [--size-max B] [--timeout-ms MS]
 *              [--drop-conn-ms MS] [--ratio-at SEC:R,...] [--seed S]
 *              [--messenger plain|traced] [--sample-ratio R] ...
 *
 * Runs its own libuv loop (the messenger runs on it too), issues
 * operations for --duration seconds, waits for the last answers (each
 * bounded by its timeout), prints throughput, latency percentiles, errors
 * by kind and verification counts, and exits 1 on any verification
 * failure, a hang, an accounting error, or more than --max-failed-pct
 * (default 1) percent of the issued operations failed; 2 on bad usage or
 * start-up failure; else 0.
 *
 * Never: hang (a hard deadline stops the loop), or exit 0 after a wrong
 * read. */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "hoptrace/error.h"
#include "hoptrace/sampler.h"
#include "sim_common.h"
#include "sim_proto.h"

#define HARD_GRACE_NS 15000000000ull /* after the run: answers or give up */

static void usage(FILE *f) {
  fprintf(f, "usage: sim-client --id N --map FILE [options]\n"
             "  --duration S         run time in seconds (default 10)\n"
             "  --inflight N         operations in flight (default 8)\n"
             "  --rate R             target ops/s (default 0: closed loop)\n"
             "  --objects N          objects of this client (default 256)\n"
             "  --read-pct P         reads (default 45)\n"
             "  --stat-pct P         stats (default 5)\n"
             "  --delete-pct P       deletes (default 5); the rest are writes\n"
             "  --size-min B / --size-max B   object sizes (default 512 / 16384)\n"
             "  --timeout-ms MS      request timeout (default 2000)\n"
             "  --drop-conn-ms MS    close one OSD connection every MS (fault)\n"
             "  --failover           try the object's set in order: a call refused at once\n"
             "                       (or, for reads and stats, reset) goes to the next OSD;\n"
             "                       traced as one span for the call, one child an attempt\n"
             "  --ratio-at SEC:R,... set the root sampling ratio at these times\n"
             "  --seed S             random seed (default: id)\n"
             "  --max-failed-pct P   exit 1 when more than P %% of the operations\n"
             "                       failed (default 1; 100: never)\n"
             SIM_COMMON_USAGE);
}

#define W "sim-client"

/* --ratio-at SEC:R,...: each SEC a number >= 0, each R in 0..1. 0, or 1
 * with a message. */
static int ratio_at_check(const char *spec) {
  const char *p = spec;
  for (;;) {
    char *end;
    double at = strtod(p, &end), r = 0;
    int ok = end != p && *end == ':' && at >= 0 && at <= 86400;
    if (ok) {
      const char *q = end + 1;
      r = strtod(q, &end);
      ok = end != q && (*end == ',' || *end == '\0') && r >= 0 && r <= 1;
    }
    if (!ok) {
      fprintf(stderr, W ": --ratio-at must be SEC:RATIO,... (SEC 0..86400, RATIO 0..1), "
                        "not '%s'\n", spec);
      return 1;
    }
    if (*end == '\0')
      return 0;
    p = end + 1;
  }
}

static int parse_args(int argc, char **argv, client_cfg *cfg, sim_common_opts *common) {
  static const struct option opts[] = {
      {"id", required_argument, NULL, 'i'},         {"map", required_argument, NULL, 'm'},
      {"duration", required_argument, NULL, 'd'},   {"inflight", required_argument, NULL, 'n'},
      {"rate", required_argument, NULL, 'r'},       {"objects", required_argument, NULL, 'o'},
      {"read-pct", required_argument, NULL, 'R'},   {"stat-pct", required_argument, NULL, 'S'},
      {"delete-pct", required_argument, NULL, 'D'}, {"size-min", required_argument, NULL, 'a'},
      {"size-max", required_argument, NULL, 'b'},   {"timeout-ms", required_argument, NULL, 't'},
      {"drop-conn-ms", required_argument, NULL, 'x'},
      {"ratio-at", required_argument, NULL, 'p'},   {"seed", required_argument, NULL, 's'},
      {"max-failed-pct", required_argument, NULL, 'f'},
      {"failover", no_argument, NULL, 'F'},
      {"help", no_argument, NULL, 'h'},             SIM_COMMON_LONGOPTS,
      {0, 0, 0, 0}};
  *cfg = (client_cfg){.duration_s = 10, .inflight = 8, .objects = 256, .read_pct = 45,
                      .stat_pct = 5, .delete_pct = 5, .size_min = 512, .size_max = 16384,
                      .timeout_ms = 2000, .max_failed_pct = 1};
  long id = -1, seed = -1, v = 0;
  int c, bad = 0;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (sim_common_option(common, c, optarg))
      continue;
    switch (c) {
    case 'i': bad |= sim_parse_long(W, "id", optarg, 0, 1000000, &id); break;
    case 'F': cfg->failover = 1; break;
    case 'm': cfg->map_path = optarg; break;
    case 'd': bad |= sim_parse_double(W, "duration", optarg, 0, 86400, &cfg->duration_s); break;
    case 'n': bad |= sim_parse_long(W, "inflight", optarg, 1, 100000, &v), cfg->inflight = (unsigned)v; break;
    case 'r': bad |= sim_parse_double(W, "rate", optarg, 0, 1e9, &cfg->rate); break;
    case 'o': bad |= sim_parse_long(W, "objects", optarg, 2, 100000000, &v), cfg->objects = (unsigned)v; break;
    case 'R': bad |= sim_parse_long(W, "read-pct", optarg, 0, 100, &v), cfg->read_pct = (unsigned)v; break;
    case 'S': bad |= sim_parse_long(W, "stat-pct", optarg, 0, 100, &v), cfg->stat_pct = (unsigned)v; break;
    case 'D': bad |= sim_parse_long(W, "delete-pct", optarg, 0, 100, &v), cfg->delete_pct = (unsigned)v; break;
    case 'a': bad |= sim_parse_long(W, "size-min", optarg, 0, 8 << 20, &v), cfg->size_min = (unsigned)v; break;
    case 'b': bad |= sim_parse_long(W, "size-max", optarg, 0, 8 << 20, &v), cfg->size_max = (unsigned)v; break;
    case 't': bad |= sim_parse_long(W, "timeout-ms", optarg, 1, 86400000, &v), cfg->timeout_ms = (uint32_t)v; break;
    case 'x': bad |= sim_parse_long(W, "drop-conn-ms", optarg, 0, 86400000, &v), cfg->drop_conn_ms = (uint32_t)v; break;
    case 'p': bad |= ratio_at_check(optarg), cfg->ratio_at = optarg; break;
    case 's': bad |= sim_parse_long(W, "seed", optarg, 0, LONG_MAX, &seed); break;
    case 'f': bad |= sim_parse_double(W, "max-failed-pct", optarg, 0, 100, &cfg->max_failed_pct); break;
    case 'h': usage(stdout); exit(0);
    default: usage(stderr); return -1;
    }
  }
  if (optind < argc)
    fprintf(stderr, W ": unexpected argument '%s'\n", argv[optind]), bad = 1;
  if (id < 0 && !bad)
    fprintf(stderr, W ": --id N is required\n"), bad = 1;
  if (cfg->map_path == NULL)
    fprintf(stderr, W ": --map FILE is required\n"), bad = 1;
  if (!bad && cfg->duration_s <= 0)
    fprintf(stderr, W ": --duration must be more than 0 s\n"), bad = 1;
  if (!bad && cfg->objects < 2 * cfg->inflight)
    fprintf(stderr, W ": --objects (%u) must be >= 2 x --inflight (%u)\n", cfg->objects,
            cfg->inflight), bad = 1;
  if (!bad && cfg->read_pct + cfg->stat_pct + cfg->delete_pct > 100)
    fprintf(stderr, W ": --read-pct + --stat-pct + --delete-pct must be <= 100 (is %u)\n",
            cfg->read_pct + cfg->stat_pct + cfg->delete_pct), bad = 1;
  if (!bad && cfg->size_min > cfg->size_max)
    fprintf(stderr, W ": --size-min (%u) must be <= --size-max (%u)\n", cfg->size_min,
            cfg->size_max), bad = 1;
  if (bad) {
    fprintf(stderr, "(sim-client --help for the options)\n");
    return -1;
  }
  cfg->id = (unsigned)id;
  cfg->seed = seed >= 0 ? (uint64_t)seed : (uint64_t)id;
  return 0;
}

/* --- timed actions: ratio schedule and dropped connections */

typedef struct timed {
  uint64_t next_drop_ns;
  const char *ratio_next; /* unparsed rest of --ratio-at */
} timed;

static timed timers;

static void ratio_step(client *c, uint64_t now) {
  while (timers.ratio_next != NULL && *timers.ratio_next != '\0') {
    char *end;
    double at = strtod(timers.ratio_next, &end);
    if (*end != ':' || now < c->start_ns + (uint64_t)(at * 1e9))
      return;
    double ratio = strtod(end + 1, &end);
    timers.ratio_next = *end == ',' ? end + 1 : NULL;
    ht_sampling_config cfg = {.size = sizeof(cfg)};
    ht_sampling_get(&cfg);
    char text[32];
    snprintf(text, sizeof(text), "%g", ratio);
    int rc = cfg.kind == HT_SAMPLER_PARENT ? ht_sampling_config_set(&cfg, "root", "ratio")
                                           : ht_sampling_config_set(&cfg, "sampler", "ratio");
    if (rc == 0)
      rc = ht_sampling_config_set(&cfg, "ratio", text);
    if (rc == 0)
      rc = ht_sampling_set(&cfg);
    fprintf(stderr, "%s: t=%.1fs sampling ratio -> %s%s\n", c->name,
            (double)(now - c->start_ns) / 1e9, text, rc ? " (rejected)" : "");
  }
}

static void drop_step(client *c, uint64_t now) {
  if (c->cfg.drop_conn_ms == 0 || now < timers.next_drop_ns)
    return;
  timers.next_drop_ns = now + (uint64_t)c->cfg.drop_conn_ms * 1000000ull;
  unsigned i = (unsigned)client_rand(c, c->map.n_osds);
  ht_peer *p = c->peers[i];
  c->peers[i] = NULL; /* replies to its requests (HT_ECLOSED) must not pick it */
  if (p != NULL)
    ht_peer_close(p);
  if (ht_messenger_connect(c->m, c->map.urls[i], &c->peers[i]) != 0)
    c->peers[i] = NULL;
  c->st.drops++;
}

static void on_tick(uv_timer_t *t) {
  client *c = t->data;
  uint64_t now = sim_now_ns();
  ratio_step(c, now);
  sim_log_flush(&c->log);
  if (!c->stopping)
    drop_step(c, now);
  workload_fill(c);
  if (c->stopping && (c->inflight == 0 || now > c->end_ns + HARD_GRACE_NS))
    uv_stop(&c->loop);
}

/* Runs the loop until every peer is connected or 5 s passed. */
static void on_wait_tick(uv_timer_t *t) {
  client *c = t->data;
  unsigned up = 0;
  for (unsigned i = 0; i < c->map.n_osds; i++)
    up += c->peers[i] != NULL && ht_peer_connected(c->peers[i]);
  if (up == c->map.n_osds || sim_now_ns() > c->start_ns)
    uv_stop(&c->loop);
}

static int connect_all(client *c) {
  for (unsigned i = 0; i < c->map.n_osds; i++) {
    int rc = ht_messenger_connect(c->m, c->map.urls[i], &c->peers[i]);
    if (rc != 0) {
      fprintf(stderr, "%s: connect %s: %s\n", c->name, c->map.urls[i], ht_strerror(rc));
      return -1;
    }
  }
  c->start_ns = sim_now_ns() + 5000000000ull; /* the wait's deadline */
  uv_timer_start(&c->tick, on_wait_tick, 10, 10);
  uv_run(&c->loop, UV_RUN_DEFAULT);
  uv_timer_stop(&c->tick);
  return 0;
}

static void run(client *c) {
  c->start_ns = sim_now_ns();
  c->end_ns = c->start_ns + (uint64_t)(c->cfg.duration_s * 1e9);
  timers.ratio_next = c->cfg.ratio_at;
  timers.next_drop_ns = c->start_ns + (uint64_t)c->cfg.drop_conn_ms * 1000000ull;
  fprintf(stderr, "%s: running for %g s (pid %d)\n", c->name, c->cfg.duration_s, (int)getpid());
  ratio_step(c, c->start_ns);
  workload_fill(c);
  uv_timer_start(&c->tick, on_tick, 1, 1);
  uv_run(&c->loop, UV_RUN_DEFAULT);
  uv_timer_stop(&c->tick);
}

void client_report(client *c, double secs, int hung); /* client_report.c */

static void shutdown_client(client *c) {
  if (c->m != NULL)
    ht_messenger_close(c->m, 1000); /* outstanding requests: HT_ESHUTDOWN */
  uv_close((uv_handle_t *)&c->tick, NULL);
  uv_run(&c->loop, UV_RUN_DEFAULT);
  uv_loop_close(&c->loop);
  sim_log_finish(&c->log);
  free(c->objs);
  c->objs = NULL;
}

int main(int argc, char **argv) {
  static client c;
  sim_common_opts common = {0};
  char err[256];
  if (parse_args(argc, argv, &c.cfg, &common) != 0)
    return 2;
  snprintf(c.name, sizeof(c.name), "client.%u", c.cfg.id);
  if (sim_map_load(&c.map, c.cfg.map_path, err, sizeof(err)) != 0) {
    fprintf(stderr, "%s: %s\n", c.name, err);
    return 2;
  }
  c.rng = c.cfg.seed * 0x9e3779b97f4a7c15ull + 1;
  signal(SIGPIPE, SIG_IGN);
  if (sim_common_apply(&common, c.name) != 0 || sim_log_init(&c.log, &common, c.name) != 0)
    return 2;
  if (uv_loop_init(&c.loop) != 0) {
    sim_log_finish(&c.log);
    return 2;
  }
  uv_timer_init(&c.loop, &c.tick);
  c.tick.data = &c;
  c.objs = calloc(c.cfg.objects, sizeof(*c.objs));
  int rc = c.objs == NULL ? -1 : sim_messenger_create(&c.m, &common, c.name, &c.loop, c.cfg.timeout_ms, &c.log);
  if (rc == 0)
    rc = connect_all(&c);
  int hung = 0;
  if (rc == 0) {
    run(&c);
    hung = c.inflight > 0;
  }
  double secs = (double)(sim_now_ns() - c.start_ns) / 1e9;
  shutdown_client(&c);
  if (rc != 0)
    return 2;
  client_report(&c, secs, hung);
  for (int k = 0; k < OP_KINDS; k++)
    sim_latency_free(&c.st.lat[k]);
  sim_latency_free(&c.st.all);
  free(c.st.settled);
  uint64_t ok = 0, failed = 0;
  for (int k = 0; k < OP_KINDS; k++)
    ok += c.st.ok[k], failed += c.st.failed[k];
  int accounted = ok + failed == c.issued && c.st.duplicates == 0;
  if (!accounted)
    fprintf(stderr, "%s: ACCOUNTING FAILED: %llu issued, %llu answered, %llu failed, "
                    "%llu duplicates\n", c.name, (unsigned long long)c.issued,
            (unsigned long long)ok, (unsigned long long)failed,
            (unsigned long long)c.st.duplicates);
  /* more than --max-failed-pct of the issued operations failed */
  int too_many = c.issued > 0 && (double)failed * 100.0 > c.cfg.max_failed_pct * (double)c.issued;
  if (too_many)
    fprintf(stderr, "%s: FAILED: %llu of %llu operations failed (%.2f %%, more than "
                    "--max-failed-pct %g)\n", c.name, (unsigned long long)failed,
            (unsigned long long)c.issued, (double)failed * 100.0 / (double)c.issued,
            c.cfg.max_failed_pct);
  sim_report_cpu(c.name);
  return c.st.verify_failures > 0 || hung || !accounted || too_many ? 1 : 0;
}
