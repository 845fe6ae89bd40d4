/* Schema 2's names, resolved in the merged, time-ordered event stream:
 * the tables (process, desc, peer events) of each (host, vpid) are kept,
 * and every span side gets its names, peer and frame annotations from
 * them; any event of a known process without a procname context gets the
 * process's name. */
#ifndef HT_TOOL_NAMES_H
#define HT_TOOL_NAMES_H

#include <stdint.h>

#include "read/event.h"

typedef struct names names;

names *names_new(void);
void names_free(names *n);

/* 1: *ev is to be passed on (resolved where it could be); 0: a table
 * entry, kept here; -1: out of memory. Strings set in *ev are valid until
 * the next call. */
int names_apply(names *n, hop_event *ev);

/* Span sides whose name or peer id had no table entry: the process wrote
 * its tables before this session recorded it, or LTTng lost them. */
uint64_t names_unresolved(const names *n);

#endif
