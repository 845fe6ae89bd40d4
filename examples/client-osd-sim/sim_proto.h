/* The simulator's request payloads: what a client and the OSDs put inside
 * an envelope, and the deterministic object contents the client verifies.
 *
 * Layout (little endian, packed by hand, no padding):
 *   object request  u64 version | u16 name_len | name | data...
 *                   (read/stat/delete carry no data; read/stat version 0)
 *   object reply    u64 version | u8 state | data...  (read only has data)
 * state: 0 absent (never written), 1 present, 2 deleted (tombstone).
 *
 * Never: allocate in the decoders (they point into the caller's bytes),
 * or trust a length before checking it against the buffer. */
#ifndef SIM_PROTO_H
#define SIM_PROTO_H

#include <stddef.h>
#include <stdint.h>

/* Operations, as envelope operation names (they become span names). */
#define SIM_OP_WRITE "osd_write"
#define SIM_OP_READ "osd_read"
#define SIM_OP_STAT "osd_stat"
#define SIM_OP_DELETE "osd_delete"
#define SIM_OP_REPLICA_WRITE "replica_write"
#define SIM_OP_REPLICA_DELETE "replica_delete"
/* between OSDs, for a restarted OSD's read-repair (osd_repair.c): */
#define SIM_OP_PULL "osd_pull"             /* object request -> object reply */
#define SIM_OP_PEER_CHECK "osd_peer_check" /* version = asker's id; 0: connected back */

#define SIM_NAME_MAX 200

enum sim_state { SIM_ABSENT = 0, SIM_PRESENT = 1, SIM_DELETED = 2 };

typedef struct sim_obj_req {
  uint64_t version;
  const char *name; /* not NUL-terminated: name_len bytes */
  size_t name_len;
  const uint8_t *data;
  size_t data_len;
} sim_obj_req;

typedef struct sim_obj_reply {
  uint64_t version;
  int state;
  const uint8_t *data;
  size_t data_len;
} sim_obj_reply;

#define SIM_REQ_HDR 10
#define SIM_REPLY_HDR 9

/* Encodes into buf (cap >= SIM_REQ_HDR + name_len + data_len); returns
 * the length, or 0 when it does not fit. */
size_t sim_req_encode(uint8_t *buf, size_t cap, const sim_obj_req *r);
/* 0, or -1 for a malformed payload. */
int sim_req_decode(const void *p, size_t len, sim_obj_req *out);

size_t sim_reply_encode(uint8_t *buf, size_t cap, const sim_obj_reply *r);
int sim_reply_decode(const void *p, size_t len, sim_obj_reply *out);

/* The content of version `version` of object `name`: len bytes of a
 * stream seeded by both, so any reader can check what it got. */
void sim_fill(uint8_t *buf, size_t len, const char *name, uint64_t version);
/* 1 when buf is exactly what sim_fill would write. */
int sim_check(const uint8_t *buf, size_t len, const char *name,
              uint64_t version);

/* FNV-1a 64 of bytes. */
uint64_t sim_hash(const void *p, size_t len, uint64_t seed);

/* Monotonic clock in nanoseconds. */
uint64_t sim_now_ns(void);

#endif
