/* The end of a live input, told honestly: compared with the relay's own
 * files when --relay-dir names them (read/relay_check.h); otherwise the
 * traces it may have cut short are marked. Must never call an end clean that it could not check. */
#ifndef HT_TOOL_LIVE_END_H
#define HT_TOOL_LIVE_END_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "assemble/assemble.h"
#include "assemble/host_health.h"
#include "read/relay_check.h"

/* After the live input ended by itself, before the assembler's end:
 * the relay's files of each URL under relay_dir against what came
 * (host_health), the open traces of a host with events never received
 * marked incomplete. 0 nothing missing, 1 events never received (c's
 * gaps), -1 not compared (message on stderr). since_ns: the run's start
 * (epoch ns); only_trace: {hi, lo} of the one trace read, or NULL. */
int live_end_check(relay_check *c, const char *relay_dir, const char *const *urls,
                   size_t n_urls, host_health *hosts, assembler *a, int64_t since_ns,
                   const uint64_t *only_trace, atomic_int *stop);

/* Without --relay-dir, after the live input ended by itself, before the
 * assembler's end: nothing tells a daemon that died from a clean destroy,
 * so the traces still open with a span of a host that ended (every host
 * of the input) are marked incomplete, their end unchecked (counted in
 * the assembler's unreceived_traces as they are written). */
void live_end_unchecked(host_health *hosts, assembler *a);

/* On stderr: what c found (found: live_end_check's 1), or, with no
 * relay_dir, each host's end unchecked and the traces marked for it
 * (none: that the end could not be checked). */
void live_end_print(const relay_check *c, int found, const char *relay_dir,
                    const host_health *hosts, uint64_t marked_traces);

#endif
