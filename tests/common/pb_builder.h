/* Hand-built protobuf bytes for malformed-input tests: the encoder under
 * test is never used to build its own counter-examples. */
#ifndef HT_TEST_PB_BUILDER_H
#define HT_TEST_PB_BUILDER_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct pb_builder {
  uint8_t buf[4096];
  size_t len;
} pb_builder;

static inline void pb_byte(pb_builder *b, uint8_t byte) {
  assert(b->len < sizeof(b->buf));
  b->buf[b->len++] = byte;
}

static inline void pb_varint(pb_builder *b, uint64_t v) {
  while (v >= 0x80) {
    pb_byte(b, (uint8_t)(v | 0x80));
    v >>= 7;
  }
  pb_byte(b, (uint8_t)v);
}

static inline void pb_tag(pb_builder *b, uint32_t field, uint32_t wire_type) {
  pb_varint(b, (uint64_t)field << 3 | wire_type);
}

static inline void pb_fixed64(pb_builder *b, uint64_t v) {
  for (int i = 0; i < 8; i++)
    pb_byte(b, (uint8_t)(v >> (8 * i)));
}

static inline void pb_bytes(pb_builder *b, const void *data, size_t len) {
  assert(b->len + len <= sizeof(b->buf));
  memcpy(b->buf + b->len, data, len);
  b->len += len;
}

/* field: length-delimited from another builder */
static inline void pb_submessage(pb_builder *b, uint32_t field,
                                 const pb_builder *sub) {
  pb_tag(b, field, 2);
  pb_varint(b, sub->len);
  pb_bytes(b, sub->buf, sub->len);
}

/* Prepends a 4-byte big-endian length prefix into out. */
static inline size_t pb_frame(const pb_builder *b, uint8_t *out) {
  out[0] = (uint8_t)(b->len >> 24);
  out[1] = (uint8_t)(b->len >> 16);
  out[2] = (uint8_t)(b->len >> 8);
  out[3] = (uint8_t)b->len;
  memcpy(out + 4, b->buf, b->len);
  return b->len + 4;
}

#endif
