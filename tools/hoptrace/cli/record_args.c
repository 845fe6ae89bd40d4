/* `hoptrace record`'s command line (record_setup.h). */
#include "cli/record_setup.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_pids(record_options *o, const char *list) {
  for (const char *p = list; *p; p++)
    if ((*p < '0' || *p > '9') && *p != ',')
      return -1;
  size_t n = strlen(o->pids);
  if (n + strlen(list) + 2 >= sizeof(o->pids))
    return -1;
  snprintf(o->pids + n, sizeof(o->pids) - n, "%s%s", n ? "," : "", list);
  return 0;
}

int record_parse(int argc, char **argv, record_options *o) {
  static const struct option longopts[] = {
      {"output", required_argument, NULL, 'o'}, {"live", required_argument, NULL, 'l'},
      {"subbuf-size", required_argument, NULL, 's'},
      {"num-subbuf", required_argument, NULL, 'n'},
      {"name", required_argument, NULL, 'N'},
      {"filter", required_argument, NULL, 'f'}, {"force", no_argument, NULL, 'F'},
      {"pid", required_argument, NULL, 'p'}, {"procname", required_argument, NULL, 'P'},
      {"keep-going", no_argument, NULL, 'k'},
      {"shared-sessiond", no_argument, NULL, 'S'},
      {"flight", no_argument, NULL, 'R'}, {"flight-size", required_argument, NULL, 1},
      {"snapshot-rate", required_argument, NULL, 2},
      {"coalesce-ms", required_argument, NULL, 3},
      {"max-defer-ms", required_argument, NULL, 4},
      {"capture-event", required_argument, NULL, 5}, /* tests: another event */
      {"relay", required_argument, NULL, 6},
      {"snapshot-max", required_argument, NULL, 7},
      {"trace-ids", no_argument, NULL, 8},
      {"daemon-timeout", required_argument, NULL, 9},
      {"flight-names-size", required_argument, NULL, 10},
      {0, 0, 0, 0}};
  *o = (record_options){.subbuf_size = "2M", .num_subbuf = "8", .daemon_ms = -1};
  o->fo = (flight_options){.ring_bytes = FLIGHT_DEFAULT_RING,
                           .names_bytes = FLIGHT_DEFAULT_NAMES_RING, .snapshot_rate = 2,
                           .coalesce_ms = 20, .max_defer_ms = 1000,
                           .event = "hoptrace:capture"};
  char *end;
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+o:", longopts, NULL)) != -1) {
    switch (c) {
    case 'o': o->output = optarg; break;
    case 'l': o->live_url = optarg; break;
    case 's': o->subbuf_size = optarg; break;
    case 'n': o->num_subbuf = optarg; break;
    case 'N': o->name = optarg; break;
    case 'f': o->filter = optarg; break;
    case 'F': o->force = 1; break;
    case 'k': o->keep_going = 1; break;
    case 'S': o->shared = 1; break;
    case 'R': o->flight = 1; break;
    case 1:
      if ((o->fo.ring_bytes = flight_parse_size(optarg)) == 0) {
        fprintf(stderr, "hoptrace: --flight-size wants a size (16M, 512k): %s\n", optarg);
        return -1;
      }
      break;
    case 10:
      if ((o->fo.names_bytes = flight_parse_size(optarg)) == 0) {
        fprintf(stderr, "hoptrace: --flight-names-size wants a size (256k, 16k): %s\n",
                optarg);
        return -1;
      }
      break;
    case 2:
      o->fo.snapshot_rate = strtod(optarg, &end);
      if (*end != '\0' || !(o->fo.snapshot_rate > 0 && o->fo.snapshot_rate <= 1000)) {
        fprintf(stderr, "hoptrace: --snapshot-rate wants snapshots a second in (0, 1000]\n");
        return -1;
      }
      break;
    case 3:
    case 4: {
      long ms = strtol(optarg, &end, 10);
      if (*end != '\0' || ms < 0 || ms > 3600000) {
        fprintf(stderr, "hoptrace: --%s wants milliseconds\n",
                c == 3 ? "coalesce-ms" : "max-defer-ms");
        return -1;
      }
      *(c == 3 ? &o->fo.coalesce_ms : &o->fo.max_defer_ms) = (int)ms;
      break;
    }
    case 5: o->fo.event = optarg; break;
    case 6: o->fo.relay_url = optarg; break;
    case 8: o->fo.trace_ids = 1; break;
    case 9: {
      double sec = strtod(optarg, &end);
      if (*end != '\0' || !(sec >= 0.1 && sec <= 3600)) {
        fprintf(stderr, "hoptrace: --daemon-timeout wants seconds in [0.1, 3600]: %s\n",
                optarg);
        return -1;
      }
      o->daemon_ms = (int)(sec * 1000);
      break;
    }
    case 7:
      if ((o->fo.snapshot_max = flight_parse_size(optarg)) == 0) {
        fprintf(stderr, "hoptrace: --snapshot-max wants a size (4M): %s\n", optarg);
        return -1;
      }
      break;
    case 'p':
      if (add_pids(o, optarg) != 0) {
        fprintf(stderr, "hoptrace: --pid wants PID[,PID...]: %s\n", optarg);
        return -1;
      }
      break;
    case 'P':
      if (o->nprocnames == MAX_PROCNAMES || strchr(optarg, '"') || strchr(optarg, '\\')) {
        fprintf(stderr, "hoptrace: --procname: at most %d names, without quotes or "
                        "backslashes\n", MAX_PROCNAMES);
        return -1;
      }
      o->procnames[o->nprocnames++] = optarg;
      break;
    default: return -1;
    }
  }
  if (optind >= argc)
    return -1;
  if (o->flight && o->live_url != NULL) {
    fprintf(stderr, "hoptrace: --flight records in memory: not with --live (use --relay)\n");
    return -1;
  }
  if (!o->flight && o->fo.relay_url != NULL) {
    fprintf(stderr, "hoptrace: --relay goes with --flight\n");
    return -1;
  }
  if (o->daemon_ms < 0)
    o->daemon_ms = o->flight ? RECORD_DAEMON_MS : 0;
  o->command = argv + optind;
  return 0;
}
