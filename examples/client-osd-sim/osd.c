/* sim-osd: one object storage daemon of the simulated cluster.
 *
 *   sim-osd --id N --map FILE [--data DIR] [--workers N] [--slow-ms MS]
 *           [--crash-after SEC] [--ready-file F] [--replica-timeout-ms MS]
 *           [--recovering]
 *           [--messenger plain|traced] [--sample-ratio R] ...
 *
 * Listens on its map address, connects to every other OSD, writes the
 * ready file once all peers are connected (or after 5 s), and serves until
 * SIGTERM/SIGINT (graceful: drains, exit 0) or until --crash-after, when
 * it SIGKILLs itself (a crash: no drain, connections reset).
 *
 * --recovering: a restart after a crash (same address, same --data):
 * connects to its peers before it listens, and repairs objects on read
 * until it has seen them written (osd_repair.h).
 *
 * Never: exit with requests unanswered on the graceful path. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hoptrace/error.h"
#include "osd.h"
#include "osd_repair.h"
#include "sim_common.h"
#include "sim_proto.h"

typedef struct osd_args {
  const char *map_path, *data_dir, *ready_file;
  long id, workers, slow_ms, replica_timeout_ms, corrupt_every;
  double slow_pct;
  double crash_after; /* 0: never */
  int recovering;
  sim_common_opts common;
} osd_args;

static void usage(FILE *f) {
  fprintf(f, "usage: sim-osd --id N --map FILE [options]\n"
             "  --data DIR                 store objects as files (default: memory)\n"
             "  --workers N                disk worker threads (default 4)\n"
             "  --slow-ms MS               add MS to every disk write (a slow OSD)\n"
             "  --slow-pct P               ... to P percent of them only, at random (default 100)\n"
             "  --crash-after SEC          SIGKILL itself after SEC seconds\n"
             "  --ready-file F             touch F once serving and connected\n"
             "  --replica-timeout-ms MS    replica request timeout (default 1000)\n"
             "  --corrupt-reads N          flip a byte in every Nth read reply (fault)\n"
             "  --recovering               a restart: repair objects on read (read-repair)\n"
             SIM_COMMON_USAGE);
}

#define W "sim-osd"

static int parse_args(int argc, char **argv, osd_args *a) {
  static const struct option opts[] = {{"id", required_argument, NULL, 'i'},
                                       {"map", required_argument, NULL, 'm'},
                                       {"data", required_argument, NULL, 'd'},
                                       {"workers", required_argument, NULL, 'w'},
                                       {"slow-ms", required_argument, NULL, 's'},
                                       {"slow-pct", required_argument, NULL, 'P'},
                                       {"crash-after", required_argument, NULL, 'c'},
                                       {"ready-file", required_argument, NULL, 'r'},
                                       {"replica-timeout-ms", required_argument, NULL, 't'},
                                       {"corrupt-reads", required_argument, NULL, 'x'},
                                       {"recovering", no_argument, NULL, 'v'},
                                       {"help", no_argument, NULL, 'h'},
                                       SIM_COMMON_LONGOPTS,
                                       {0, 0, 0, 0}};
  memset(a, 0, sizeof(*a));
  a->id = -1;
  a->crash_after = 0;
  a->workers = 4;
  a->slow_pct = 100;
  a->replica_timeout_ms = 1000;
  int c, bad = 0;
  double d;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (sim_common_option(&a->common, c, optarg))
      continue;
    switch (c) {
    case 'i': bad |= sim_parse_long(W, "id", optarg, 0, SIM_MAX_OSDS - 1, &a->id); break;
    case 'm': a->map_path = optarg; break;
    case 'd': a->data_dir = optarg; break;
    case 'w': bad |= sim_parse_long(W, "workers", optarg, 1, 256, &a->workers); break;
    case 's': bad |= sim_parse_long(W, "slow-ms", optarg, 0, 600000, &a->slow_ms); break;
    case 'P': bad |= sim_parse_double(W, "slow-pct", optarg, 0, 100, &a->slow_pct); break;
    case 'c':
      bad |= sim_parse_double(W, "crash-after", optarg, 0, 86400, &d);
      a->crash_after = d;
      break;
    case 'r': a->ready_file = optarg; break;
    case 't':
      bad |= sim_parse_long(W, "replica-timeout-ms", optarg, 1, 86400000, &a->replica_timeout_ms);
      break;
    case 'v': a->recovering = 1; break;
    case 'x': bad |= sim_parse_long(W, "corrupt-reads", optarg, 0, 1000000000, &a->corrupt_every);
      break;
    case 'h': usage(stdout); exit(0);
    default: usage(stderr); return -1;
    }
  }
  if (optind < argc) {
    fprintf(stderr, W ": unexpected argument '%s'\n", argv[optind]);
    bad = 1;
  }
  if (a->id < 0 && !bad)
    fprintf(stderr, W ": --id N is required\n"), bad = 1;
  if (a->map_path == NULL)
    fprintf(stderr, W ": --map FILE is required\n"), bad = 1;
  if (bad) {
    fprintf(stderr, "(sim-osd --help for the options)\n");
    return -1;
  }
  return 0;
}

/* Creates a peer for every other OSD. Before any handler is registered:
 * handlers read o->peers without a lock. */
static int connect_peers(osd *o) {
  for (unsigned i = 0; i < o->map.n_osds; i++) {
    if (i == o->id)
      continue;
    int rc = ht_messenger_connect(o->m, o->map.urls[i], &o->peers[i]);
    if (rc != 0) {
      fprintf(stderr, "%s: connect %s: %s\n", o->name, o->map.urls[i], ht_strerror(rc));
      return -1;
    }
  }
  return 0;
}

/* Waits up to 5 s until every peer is connected (they start together). */
static void wait_peers(const osd *o) {
  uint64_t deadline = sim_now_ns() + 5000000000ull;
  for (;;) {
    unsigned up = 0;
    for (unsigned i = 0; i < o->map.n_osds; i++)
      up += i == o->id || ht_peer_connected(o->peers[i]);
    if (up == o->map.n_osds || sim_now_ns() > deadline)
      return;
    nanosleep(&(struct timespec){0, 20000000}, NULL);
  }
}

static int start(osd *o, const osd_args *a) {
  char bound[SIM_URL_MAX];
  int rc;
  if (sim_store_new(&o->store, a->data_dir) != 0 ||
      sim_workers_new(&o->workers, (unsigned)a->workers) != 0 ||
      osd_repair_init(o, a->recovering) != 0) {
    fprintf(stderr, "%s: cannot create store or workers\n", o->name);
    return -1;
  }
  if (sim_messenger_create(&o->m, &a->common, o->name, NULL, o->replica_timeout_ms, &o->log) != 0)
    return -1;
  if (connect_peers(o) != 0)
    return -1;
  if (a->recovering)
    wait_peers(o); /* the others run: replicate to them from the first request */
  if ((rc = osd_handlers_register(o)) != 0 ||
      (rc = ht_messenger_listen(o->m, o->map.urls[o->id], bound, sizeof(bound))) != 0) {
    sim_listen_error(o->name, o->map.urls[o->id], rc);
    return -1;
  }
  wait_peers(o);
  fprintf(stderr, "%s: serving on %s (%u workers%s%s, pid %d)\n", o->name, bound,
          (unsigned)a->workers, o->slow_ms ? ", slow disk" : "",
          a->recovering ? ", recovering: read-repair" : "", (int)getpid());
  if (a->ready_file != NULL) {
    FILE *f = fopen(a->ready_file, "w");
    if (f == NULL)
      return -1;
    fprintf(f, "%s\n", bound);
    fclose(f);
  }
  return 0;
}

/* Waits for SIGTERM/SIGINT; crashes at the deadline if one is set. */
static void serve(osd *o, const sigset_t *sigs, double crash_after) {
  uint64_t crash_at = crash_after > 0 ? sim_now_ns() + (uint64_t)(crash_after * 1e9) : 0;
  for (;;) {
    struct timespec tick = {0, 50000000};
    if (sigtimedwait(sigs, NULL, &tick) > 0)
      return;
    osd_repair_check_peers(o);
    sim_log_flush(&o->log);
    if (crash_at != 0 && sim_now_ns() >= crash_at) {
      fprintf(stderr, "%s: crashing now (--crash-after)\n", o->name);
      raise(SIGKILL);
    }
  }
}

static void stop(osd *o) {
  if (o->m != NULL)
    ht_messenger_close(o->m, 2000); /* drains: workers answer what is held */
  sim_workers_free(o->workers);
  sim_store_free(o->store);
  sim_log_finish(&o->log); /* the counts held back, before the last lines */
  if (o->rec != NULL)
    fprintf(stderr, "%s: read-repair: %llu objects repaired, %llu newer copies adopted, "
                    "%llu repairs failed\n", o->name, (unsigned long long)o->repairs,
            (unsigned long long)o->repaired, (unsigned long long)o->repair_failed);
  osd_repair_free(o);
  sim_report_cpu(o->name); /* before the "stopped:" line, which stays last */
  fprintf(stderr, "%s: stopped: %llu client ops, %llu replica ops, %llu replica sends failed "
                  "(%llu of sampled writes), %llu degraded writes, "
                  "%llu stale writes ignored, %llu misdirected, %llu pulls served\n",
          o->name, (unsigned long long)o->client_ops, (unsigned long long)o->replica_ops,
          (unsigned long long)o->replica_failed, (unsigned long long)o->replica_failed_sampled,
          (unsigned long long)o->degraded, (unsigned long long)o->stale,
          (unsigned long long)o->refused, (unsigned long long)o->pulls);
}

int main(int argc, char **argv) {
  osd_args a;
  if (parse_args(argc, argv, &a) != 0)
    return 2;
  static osd o; /* big (map) and shared with every thread */
  char err[256];
  if (sim_map_load(&o.map, a.map_path, err, sizeof(err)) != 0) {
    fprintf(stderr, "sim-osd: %s\n", err);
    return 2;
  }
  if ((unsigned long)a.id >= o.map.n_osds) {
    fprintf(stderr, "sim-osd: id %ld not in the map\n", a.id);
    return 2;
  }
  o.id = (unsigned)a.id;
  o.slow_ms = (unsigned)a.slow_ms;
  o.slow_pct = a.slow_pct;
  o.corrupt_every = (unsigned)a.corrupt_every;
  o.replica_timeout_ms = (uint32_t)a.replica_timeout_ms;
  snprintf(o.name, sizeof(o.name), "osd.%u", o.id);
  if (a.data_dir != NULL && sim_store_check_dir(a.data_dir, err, sizeof(err)) != 0) {
    fprintf(stderr, "sim-osd: --data %s: %s\n", a.data_dir, err);
    return 2;
  }
  if (sim_common_apply(&a.common, o.name) != 0 || sim_log_init(&o.log, &a.common, o.name) != 0)
    return 2;
  sigset_t sigs; /* main takes them with sigtimedwait */
  sim_block_stop_signals(&sigs);
  int rc = start(&o, &a);
  if (rc == 0)
    serve(&o, &sigs, a.crash_after);
  stop(&o);
  return rc == 0 ? 0 : 1;
}
