/* Reads hoptrace events from an LTTng trace through libbabeltrace2:
 * a trace directory (src.ctf.fs, every CTF trace found below the path)
 * or a live session (src.ctf.lttng-live, net://HOST/host/NAME/SESSION).
 * Events of all streams arrive in time order (flt.utils.muxer).
 *
 * What the other rooms use of read/: bt_source_run and
 * bt_source_run_many are one graph in this process (bt_graph.c);
 * bt_source_open/read/close choose between that and decoder processes
 * (bt_source.c); the trace directories below an input are found by
 * trace_dirs.h. */
#ifndef HT_TOOL_BT_SOURCE_H
#define HT_TOOL_BT_SOURCE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "read/event.h"

typedef struct bt_source_stats {
  uint64_t events;            /* every event read, hoptrace or not */
  uint64_t hop_events;        /* hoptrace:* events decoded */
  uint64_t malformed_events;  /* hoptrace:* events missing fields */
  uint64_t foreign_names;     /* name events naming another process's
                                 ids (their vpid context says who wrote
                                 them): dropped */
  uint64_t discarded_events;  /* lost by LTTng (ring buffer full) */
  uint64_t discarded_packets; /* lost by LTTng (whole packets) */
  uint64_t trace_dirs;        /* CTF traces found (file input) */
  uint64_t unresolved_names;  /* span sides whose name or peer id had no
                                 table entry (names.h) */
  uint64_t redefined_names;   /* table entries written again with other
                                 text (a reused vpid, or a hostile
                                 process): each side keeps its time's */
  uint64_t duplicate_events;  /* flight snapshots: copies of an event that
                                 overlapping snapshots both held, skipped
                                 (dedupe.h) */
  bool flight;                /* the input is flight-recorder snapshots */
} bt_source_stats;

typedef struct bt_source_callbacks {
  /* Each decoded hoptrace event. Non-zero stops the run. */
  int (*on_event)(void *user, const hop_event *ev);
  /* LTTng lost events or packets of one stream (event.h). */
  void (*on_discarded)(void *user, const hop_loss *loss);
  /* Live input only: no data for now; called about every 100 ms. */
  void (*on_idle)(void *user);
} bt_source_callbacks;

/* Reads `input` to its end with one graph in this process (live: until
 * the session is destroyed or *stop becomes non-zero). Returns 0, or -1
 * with a message in err. */
int bt_source_run(const char *input, const bt_source_callbacks *callbacks,
                  void *user, bt_source_stats *stats,
                  atomic_int *stop, char *err, size_t err_len);

/* The same for several inputs read as one, in time order: trace
 * directories (every trace below each), or live URLs (one session each,
 * e.g. the same session name on several hosts of one relay); not both. */
int bt_source_run_many(const char *const *inputs, size_t n_inputs,
                       const bt_source_callbacks *callbacks, void *user,
                       bt_source_stats *stats, atomic_int *stop, char *err,
                       size_t err_len);

/* The same, decoded on up to `decoders` CPUs when the input is a trace
 * directory with several stream files (bt_parallel.h): open starts the
 * decoder processes, so call it before starting threads; read merges
 * their events (as bt_source_run); close ends them. Events arrive in the
 * same time order either way. open: NULL when out of memory. */
typedef struct bt_source bt_source;
bt_source *bt_source_open(const char *const *inputs, size_t n_inputs, unsigned decoders);
int bt_source_read(bt_source *s, const bt_source_callbacks *callbacks,
                   void *user, bt_source_stats *stats,
                   atomic_int *stop, char *err, size_t err_len);
void bt_source_close(bt_source *s);
/* Before naming, each event but the name tables' (process, desc, peer)
 * is shown to skip; true drops it (cli/flight_follow.c: copies of events
 * an earlier snapshot held). */
/* Reads name events with n's tables, kept by the caller across reads
 * (names.h): a snapshot whose names ring wrapped is named from an
 * earlier one (cli/flight_follow.c). */
typedef struct names names;
void bt_source_share_names(bt_source *s, names *n);
void bt_source_set_skip(bt_source *s, bool (*skip)(void *user, const hop_event *ev),
                        void *user);

#endif
