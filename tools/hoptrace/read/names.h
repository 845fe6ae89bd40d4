/* Schema 2's names, resolved in the merged, time-ordered event stream:
 * the tables (process, desc, peer events) of each (host, vpid) are kept,
 * and every span side gets its names, peer and frame annotations from
 * them; any event of a known process without a procname context gets the
 * process's name. */
#ifndef HT_TOOL_NAMES_H
#define HT_TOOL_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "read/event.h"

typedef struct names names;

names *names_new(void);
void names_free(names *n);

/* A span side whose names (or its process's name) are not known yet
 * waits this long (event time) for its tables: a live viewer that
 * attached late, or a flight recorder's ring that begins after them, gets
 * them again within a second (the library writes them again while in
 * use). */
#define NAMES_HOLD_NS 3000000000ll

/* 1: *ev is to be passed on (resolved where it could be); 0: a table
 * entry, kept here, or a span side held until its names come (call
 * names_release); -1: out of memory. Strings set in *ev are valid until
 * the next call. */
int names_apply(names *n, hop_event *ev);

/* Passes on, through emit, the held span sides whose names are now known
 * (a table event examines only the sides waiting for its entry), those
 * held longer than NAMES_HOLD_NS before now_ns (unnamed, counted), or
 * with all every one. A held side is named as at its time: an entry
 * written again with other text later does not rename it. emit's
 * non-zero stops it and is returned. */
int names_release(names *n, int64_t now_ns, bool all,
                  int (*emit)(void *arg, const hop_event *ev), void *arg);

/* true when names_release has a side to pass on: named since, or held
 * long enough. */
bool names_waiting(const names *n, int64_t now_ns);

/* Span sides whose name or peer id had no table entry: the process wrote
 * its tables before this session recorded it, or LTTng lost them. */
uint64_t names_unresolved(const names *n);

/* Entries written again with other text under the same (host, vpid, id):
 * a new process with a reused pid (a restarted container's), or one
 * writing names for another. */
uint64_t names_redefined(const names *n);

/* Held sides examined for their names so far: once when held and once
 * per entry each waited for, however many table events come (tests). */
uint64_t names_examined(const names *n);

#endif
