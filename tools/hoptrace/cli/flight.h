/* `hoptrace record --flight`: the host's flight recorder. The session is
 * a snapshot session (record.c sets it up: overwrite channel in memory);
 * this agent registers a trigger on the capture event, and on each of its
 * notifications takes a snapshot of the session (lttng_snapshot_record),
 * coalesced and rate-limited (flight_policy.h), timed from the
 * notification's receipt to the snapshot written. At the end it writes
 * capture.json (flight_report.c). Two threads: one blocks on the
 * notification channel, one takes the snapshots. */
#ifndef HT_TOOL_FLIGHT_H
#define HT_TOOL_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

typedef struct flight_options {
  uint64_t ring_bytes;   /* --flight-size: ring bytes per CPU, as asked */
  uint64_t names_bytes;  /* --flight-names-size: the names channel's ring
                            bytes per CPU, as asked */
  double snapshot_rate;  /* --snapshot-rate: snapshots a second at most */
  int coalesce_ms;       /* --coalesce-ms */
  int max_defer_ms;      /* --max-defer-ms */
  const char *event;     /* --capture-event: the trigger's event */
  const char *relay_url; /* --relay: snapshots to a relay, not -o DIR */
  uint64_t snapshot_max; /* --snapshot-max: bytes a snapshot, newest
                            sub-buffers first; 0: the whole ring */
  int trace_ids;         /* --trace-ids: each notification says its trace
                            (flight_notify.h: capture_fields) */
} flight_options;

#define FLIGHT_DEFAULT_RING (8ull << 20)
#define FLIGHT_SUBBUFS 8 /* overwrite mode loses a whole sub-buffer: 1/8 */
/* The names (desc, peer, process: written again each second) have their
 * own smaller ring, so the spans' traffic never overwrites them. */
#define FLIGHT_DEFAULT_NAMES_RING (256ull << 10)
#define FLIGHT_NAMES_SUBBUFS 4

/* The channel's geometry for a ring of `bytes` a CPU: 8 sub-buffers of a
 * power of two (LTTng's rule), at least a page, holding bytes. */
void flight_geometry(uint64_t bytes, uint64_t *subbuf, unsigned *num);

/* The same for the names channel: 4 sub-buffers. */
void flight_names_geometry(uint64_t bytes, uint64_t *subbuf, unsigned *num);

/* "16M", "512k", "1G", "65536" -> bytes; 0 on a malformed size. */
uint64_t flight_parse_size(const char *text);

typedef struct flight flight;

/* Starts the agent for `session` (started); snapshots land in dir (NULL
 * with a relay). NULL (said why on stderr) when the trigger could not be
 * set; *stalled set when that is because the session daemon did not
 * answer within setup_ms (registering the trigger, opening or subscribing
 * to the notification channel): the calls are left waiting on a thread
 * of their own, liblttng-ctl must not be used again, and the trigger
 * (flight_trigger_name) may remain on the daemon. */
flight *flight_start(const char *session, const char *dir, const flight_options *o,
                     int setup_ms, int *stalled);

/* The trigger's name flight_start gives for session in this process. */
void flight_trigger_name(const char *session, char *buf, size_t cap);

/* The name of the agent's trigger on the daemon. */
const char *flight_trigger(const flight *f);

/* The run is over: waits until notifications stop (bounded), takes the
 * pending snapshot once allowed, removes the trigger, and writes
 * out_dir/capture.json and the stderr summary. Frees f. 0, or -1 when
 * capture.json could not be written. daemon_lost: the session daemon
 * died or stopped answering: nothing more is asked of it (the trigger
 * stays where it is), a snapshot it has not answered within 1 s is
 * given up, all bounded. Reading the tracers' count and removing the
 * trigger wait at most teardown_ms for the daemon: past it, *stalled is
 * set (the trigger may remain; liblttng-ctl must not be used again). */
int flight_finish(flight *f, const char *out_dir, int daemon_lost, int teardown_ms,
                  int *stalled);

#endif
