/* Read-repair of a restarted OSD (sim-osd --recovering).
 *
 * A restarted OSD may have missed writes while it was down. Until it has
 * seen a write or delete of an object (applied after every peer confirmed
 * its connection back to this OSD), or repaired it, the object is
 * "unverified": a read or stat of it first pulls the object's version and
 * bytes from the other members of its set (`osd_pull`), adopts the newest
 * copy, and only then answers. An acknowledged write is on min_size
 * copies; hearing from size - min_size peers therefore always includes
 * one of them, as long as those copies are still there (file store,
 * `--data`). With the memory store a restarted OSD lost everything, and
 * the rule holds only while at most one OSD of a PG is recovering.
 *
 * Never: answer from an unverified copy; block the loop thread. */
#ifndef SIM_OSD_REPAIR_H
#define SIM_OSD_REPAIR_H

#include <stddef.h>

#include "osd.h"

/* Creates the recovery state (recovering 0: every object is verified and
 * the functions below do nothing). 0 or -1. */
int osd_repair_init(osd *o, int recovering);
void osd_repair_free(osd *o);

/* 1 when a read or stat of the object must repair it first. Any thread. */
int osd_repair_needed(osd *o, const char *name, size_t name_len);

/* A write or delete of the object was applied (or found stale). Any thread. */
void osd_repair_applied(osd *o, const char *name, size_t name_len);

/* Pulls the object from its set's other members and adopts the newest
 * copy (on a worker thread), then calls then(arg, ok) on that worker
 * thread; ok 0 when too few peers answered (the caller answers with an
 * error). Loop thread (a handler). name is copied. */
void osd_repair_start(osd *o, const char *name, size_t name_len,
                      void (*then)(void *arg, int ok), void *arg);

/* Asks the peers that have not yet confirmed their connection back to
 * this OSD (main thread, every tick until all have). */
void osd_repair_check_peers(osd *o);

/* Registers the peer-side handlers: osd_pull, osd_peer_check. */
int osd_repair_register(osd *o);

#endif
