/* One object storage daemon of the simulator: its state and handlers.
 * osd.c runs the process; osd_ops.c answers requests.
 * Never: block the messenger's loop thread (disk work goes to workers). */
#ifndef SIM_OSD_H
#define SIM_OSD_H

#include <stdatomic.h>
#include <stdint.h>

#include "cluster_map.h"
#include "hoptrace/messenger.h"
#include "sim_common.h"
#include "store.h"
#include "workers.h"

typedef struct osd {
  unsigned id;
  char name[32];
  sim_map map;
  ht_messenger *m;
  ht_peer *peers[SIM_MAX_OSDS]; /* NULL for self; fixed after start-up */
  sim_store *store;
  sim_workers *workers;
  unsigned slow_ms;            /* added to a disk write ... */
  double slow_pct;             /* ... to this percent of them, at random */
  unsigned corrupt_every;      /* flip a byte of every Nth read (fault) */
  uint32_t replica_timeout_ms;
  sim_log log; /* the messenger's warnings and the OSD's own, rate-limited */
  atomic_uint_fast64_t client_ops, replica_ops, replica_failed, stale, refused, reads;
  atomic_uint_fast64_t replica_failed_sampled; /* of sampled writes */
  atomic_uint_fast64_t degraded; /* writes acknowledged with fewer replicas than planned */
  /* --recovering: read-repair (osd_repair.c) */
  struct osd_recovery *rec;
  atomic_uint_fast64_t repairs, repaired, repair_failed, pulls;
} osd;

/* Registers every handler of the OSD on o->m. 0 or an HT_E* code. */
int osd_handlers_register(osd *o);

#endif
