/* sim-hostile: a fuzzing peer against a live sim-osd. Shared
 * declarations of its three files:
 *   hostile_gen.c    what an attack sends (bytes, frames, envelopes)
 *   hostile_watch.c  what is watched (OSD RSS, control-socket counters,
 *                    a final legitimate request)
 *   hostile_peer.c   the connections, the poll loop, counting, the verdict
 * Never: connect anywhere but the loopback URL it was given, or run longer
 * than --duration plus a few seconds of wind-down. */
#ifndef SIM_HOSTILE_H
#define SIM_HOSTILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "test_rng.h"

/* A growing byte buffer (an attack's bytes, in order). */
typedef struct hbuf {
  uint8_t *p;
  size_t len, cap;
} hbuf;

int hbuf_put(hbuf *b, const void *data, size_t len); /* 0 or -1 */
void hbuf_free(hbuf *b);

typedef enum attack_kind {
  A_RANDOM = 0,   /* random bytes */
  A_TRUNCATED,    /* a valid frame cut short, then close */
  A_OVERSIZE,     /* a length prefix above the OSD's maximum */
  A_SLOWLORIS,    /* a big prefix, part of the body, then a slow drip */
  A_VALID_OPS,    /* well-formed requests of real operations, bad payloads */
  A_BAD_CONTEXT,  /* zero trace/span ids, reserved flag bits */
  A_DEBUG_FLOOD,  /* many DEBUG-flagged requests */
  A_BAD_ENVELOPE, /* wrong version, wrong type, unknown fields, ... */
  A_KINDS
} attack_kind;

extern const char *const attack_names[A_KINDS];

/* What one connection will do. */
typedef struct attack {
  attack_kind kind;
  hbuf bytes;          /* to send, in order */
  size_t burst;        /* slowloris: bytes sent at once before the drip */
  size_t drip;         /* slowloris: bytes per drip step */
  uint32_t frames;     /* complete frames in bytes */
  uint32_t requests;   /* of which requests (a reply or error is due) */
  uint32_t debug;      /* of which DEBUG-flagged */
  int close_after_send; /* close at once after the last byte */
  uint32_t linger_ms;  /* how long to wait for reactions */
} attack;

/* Fills *a (zeroed) with a random attack, of kind `only` unless that is
 * A_KINDS; max_frame is the OSD's frame limit. 0, or -1 (out of memory). */
int attack_make(attack *a, test_rng *rng, size_t max_frame, attack_kind only);
void attack_free(attack *a);

/* A well-formed osd_stat request of object "hostile.N" (the final
 * liveness probe). */
int attack_probe_frame(hbuf *out, uint64_t seq);

/* --- hostile_watch.c */

/* Resident memory of pid in KiB from /proc/PID/status: VmRSS, and its
 * parts RssAnon (heap, stacks: the process's own) and RssShmem (shared
 * memory: LTTng-UST ring buffers, written by whatever session records
 * this process). 0, or -1 when the process is gone. */
typedef struct watch_mem {
  long rss, anon, shmem;
} watch_mem;
int watch_mem_kib(pid_t pid, watch_mem *out);

/* Sends "status" to the control socket at path and parses the two remote
 * DEBUG counters. 0, or -1 (with a message on stderr). */
int watch_debug_counters(const char *path, unsigned long long *honoured,
                         unsigned long long *refused);

/* Connects to host:port, sends one osd_stat request and waits up to
 * timeout_ms for its reply: 0 when a reply (or error reply) came, -1 when
 * the OSD did not answer. */
int watch_probe(const char *host, int port, int timeout_ms);

uint64_t watch_now_ms(void);

#endif
