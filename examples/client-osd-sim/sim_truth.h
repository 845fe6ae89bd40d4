/* The simulator's own log of what went wrong, written by the programs
 * that saw it (clients and OSDs), not by any tracing tool: the ground
 * truth the flight recorder's tests hold the captured traces against.
 * SIM_TRUTH=FILE turns it on (appended to: several processes may share
 * it, one write() a line); each line is
 *   KIND TRACE_ID WHO VALUE
 * KIND: slow (a client op slower than SIM_TRUTH_SLOW_MS, VALUE its ns),
 * failed (a client attempt or op that failed, VALUE its status),
 * replica_failed (an OSD's replica send, VALUE its status), slow_disk
 * (an OSD's write slowed on purpose, VALUE the ms added). TRACE_ID: 32 hex
 * digits, or "-" when the program could not know it. */
#ifndef SIM_TRUTH_H
#define SIM_TRUTH_H

#include <stdint.h>

#include "hoptrace/context.h"

/* Whether SIM_TRUTH is set (read once). */
int sim_truth_on(void);

/* SIM_TRUTH_SLOW_MS in ns (0: unset). */
uint64_t sim_truth_slow_ns(void);

/* Writes one line; ctx NULL (or no trace id): "-". Nothing when off. */
void sim_truth(const char *kind, const ht_trace_context *ctx, const char *who,
               long long value);

#endif
