/* Per host of the input: what it recorded, what LTTng lost of it, when
 * its stream went quiet, and the server spans it should have recorded but
 * did not (a host whose session daemon died, whose stream stalled, or
 * whose events were discarded). A cross-host RPC's client span names its
 * server's address as peer; addresses are learnt per host from the RPCs
 * that did arrive whole, so a reply with no server span is counted
 * against the host that address belongs to and its trace is marked. */
#ifndef HT_TOOL_HOST_HEALTH_H
#define HT_TOOL_HOST_HEALTH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "assemble/model.h"
#include "read/event.h"

typedef struct host_health host_health;

host_health *host_health_new(void);
void host_health_free(host_health *h);

/* Per event and per LTTng loss (hostname "" when unknown). */
void host_health_event(host_health *h, const hop_event *ev);
void host_health_discarded(host_health *h, const char *hostname, uint64_t events,
                           uint64_t packets);

/* An emitted trace (parents resolved): learns addresses, marks the server
 * spans missing from another host (t->missing_spans, t->missing_host). */
void host_health_check(host_health *h, trace *t);

size_t host_health_count(const host_health *h);
/* The name of host i (< count), "" when its stream names none; NULL
 * when no event came from it (only its losses). */
const char *host_health_name(const host_health *h, size_t i);

/* The latest event time of host; INT64_MIN when none came from it. */
int64_t host_health_last_ns(const host_health *h, const char *host);

/* One line per host; a host whose last event came more than stall_ns
 * before the input's last event is called stalled or vanished. */
void host_health_print(const host_health *h, int64_t stall_ns, FILE *out);

#endif
