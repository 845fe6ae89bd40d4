/* After a live session ended: what the relay's own files of it hold that
 * the live stream never delivered. A live viewer cannot tell a session
 * destroyed cleanly from one whose session daemon died (SIGKILL, a
 * crash): either way lttng-relayd ends every stream with a hang-up. But
 * when the daemon dies, the relay drops the index entries of the packets
 * whose data had come and whose index had not, and serves a viewer only
 * indexed packets: their events are in the relay's files, never sent.
 * Reading those files (where this process can: --relay-dir, the relay's
 * `lttng-relayd -o` directory) finds them: every event of a host later
 * than the last one received from that host. Must never change the
 * files, nor count an event the live stream delivered. */
#ifndef HT_TOOL_RELAY_CHECK_H
#define HT_TOOL_RELAY_CHECK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "read/event.h"

#define RELAY_CHECK_MAX_HOSTS 256

/* What one host's files held past what was received. */
typedef struct relay_gap {
  char *host;
  int64_t after_ns;      /* the last event received from it; else the run's start */
  uint64_t events;       /* hoptrace events never received */
  uint64_t sides;        /* of which span sides (a span's start, or a whole side) */
} relay_gap;

typedef struct relay_check {
  /* The last event time received from host; INT64_MIN when none. */
  int64_t (*received_until)(void *user, const char *host);
  /* Each event never received (its strings borrowed for the call). */
  void (*unreceived)(void *user, const hop_event *ev, const char *host);
  void *user;
  int64_t since_ns; /* the run's start (epoch ns): a host nothing came from */
  const uint64_t *only_trace; /* {hi, lo}: the one trace read (--trace-id); NULL: all */
  /* out: the hosts with events never received (host owned here) */
  relay_gap gaps[RELAY_CHECK_MAX_HOSTS];
  size_t n_gaps;
  char *dirs; /* out: the session directories read, ", "-separated */
} relay_check;

/* Reads the relay's files of each live URL (net://HOST[:PORT]/host/
 * HOSTNAME/SESSION: relay_dir/HOSTNAME/SESSION-YYYYMMDD-HHMMSS, the
 * newest) and fills c's gaps. 0, or -1 with a message in err (a session
 * directory not found, unreadable; a cut last packet is no error: the
 * events before it count). Stops when *stop becomes non-zero. */
int relay_check_run(relay_check *c, const char *relay_dir, const char *const *urls,
                    size_t n_urls, atomic_int *stop, char *err, size_t err_len);

void relay_check_free(relay_check *c);

#endif
