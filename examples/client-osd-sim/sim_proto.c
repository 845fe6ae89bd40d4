/* Payload codec and content generator of the simulator (see sim_proto.h).
 * Never: read past a decoded length, allocate. */
#include "sim_proto.h"

#include <string.h>
#include <time.h>

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

size_t sim_req_encode(uint8_t *buf, size_t cap, const sim_obj_req *r) {
  size_t n = SIM_REQ_HDR + r->name_len + r->data_len;
  if (n > cap || r->name_len > SIM_NAME_MAX)
    return 0;
  put_u64(buf, r->version);
  buf[8] = (uint8_t)(r->name_len & 0xff);
  buf[9] = (uint8_t)(r->name_len >> 8);
  memcpy(buf + SIM_REQ_HDR, r->name, r->name_len);
  if (r->data_len > 0)
    memcpy(buf + SIM_REQ_HDR + r->name_len, r->data, r->data_len);
  return n;
}

int sim_req_decode(const void *p, size_t len, sim_obj_req *out) {
  const uint8_t *b = p;
  if (len < SIM_REQ_HDR)
    return -1;
  size_t name_len = (size_t)b[8] | ((size_t)b[9] << 8);
  if (name_len == 0 || name_len > SIM_NAME_MAX || name_len > len - SIM_REQ_HDR)
    return -1;
  out->version = get_u64(b);
  out->name = (const char *)b + SIM_REQ_HDR;
  out->name_len = name_len;
  out->data = b + SIM_REQ_HDR + name_len;
  out->data_len = len - SIM_REQ_HDR - name_len;
  return 0;
}

size_t sim_reply_encode(uint8_t *buf, size_t cap, const sim_obj_reply *r) {
  size_t n = SIM_REPLY_HDR + r->data_len;
  if (n > cap)
    return 0;
  put_u64(buf, r->version);
  buf[8] = (uint8_t)r->state;
  if (r->data_len > 0)
    memcpy(buf + SIM_REPLY_HDR, r->data, r->data_len);
  return n;
}

int sim_reply_decode(const void *p, size_t len, sim_obj_reply *out) {
  const uint8_t *b = p;
  if (len < SIM_REPLY_HDR || b[8] > SIM_DELETED)
    return -1;
  out->version = get_u64(b);
  out->state = b[8];
  out->data = b + SIM_REPLY_HDR;
  out->data_len = len - SIM_REPLY_HDR;
  return 0;
}

uint64_t sim_hash(const void *p, size_t len, uint64_t seed) {
  const uint8_t *b = p;
  uint64_t h = 1469598103934665603ull ^ seed;
  for (size_t i = 0; i < len; i++) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  return h;
}

/* splitmix64: a cheap stream good enough to detect wrong or mixed data. */
static uint64_t mix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t seed_of(const char *name, uint64_t version) {
  return sim_hash(name, strlen(name), version * 0x100000001b3ull);
}

void sim_fill(uint8_t *buf, size_t len, const char *name, uint64_t version) {
  uint64_t s = seed_of(name, version);
  for (size_t i = 0; i < len; i += 8) {
    uint64_t v = mix(&s);
    size_t n = len - i < 8 ? len - i : 8;
    memcpy(buf + i, &v, n);
  }
}

int sim_check(const uint8_t *buf, size_t len, const char *name,
              uint64_t version) {
  uint64_t s = seed_of(name, version);
  for (size_t i = 0; i < len; i += 8) {
    uint64_t v = mix(&s);
    size_t n = len - i < 8 ? len - i : 8;
    if (memcmp(buf + i, &v, n) != 0)
      return 0;
  }
  return 1;
}

uint64_t sim_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
