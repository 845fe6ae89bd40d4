/* Byte-level helpers of the envelope encoder, the canonical decoder and
 * the frame reader: little-endian fixed64, the big-endian prefix, short
 * copies and varints. Internal to src/wire/.
 * Must never read or write past the bounds the caller checked. */
#ifndef HT_WIRE_BYTES_H
#define HT_WIRE_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void wire_store_le64(uint8_t *p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(p, &v, 8);
#else
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
#endif
}

static inline uint64_t wire_load_le64(const uint8_t *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
#else
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
#endif
}

/* The frame's length prefix: big-endian, one store. */
static inline void wire_store_be32(uint8_t *p, uint32_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap32(v);
  memcpy(p, &v, 4);
#else
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (24 - 8 * i));
#endif
}

static inline uint32_t wire_load_be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3]; /* one load and a byte swap, as compilers see it */
}

/* Short copies as two overlapping fixed-size ones inside [0, n), not a
 * libc call: 8 to 16 bytes, then 0 to 7. */
static inline void wire_copy_8_to_16(unsigned char *d, const unsigned char *s,
                                     size_t n) {
  memcpy(d, s, 8);
  memcpy(d + n - 8, s + n - 8, 8);
}

static inline void wire_copy_upto7(unsigned char *d, const unsigned char *s,
                                   size_t n) {
  if (n >= 4) {
    memcpy(d, s, 4);
    memcpy(d + n - 4, s + n - 4, 4);
  } else if (n > 0) { /* 1 to 3: first, middle, last */
    d[0] = s[0];
    d[n / 2] = s[n / 2];
    d[n - 1] = s[n - 1];
  }
}

/* At most 16 bytes (the decoder's operation copy). */
static inline void wire_copy_upto16(void *dst, const void *src, size_t n) {
  if (n >= 8)
    wire_copy_8_to_16(dst, src, n);
  else
    wire_copy_upto7(dst, src, n);
}

/* memcpy for the operation's few bytes: up to 16 without a libc call (12
 * instructions less on each side of a message with "osd_write", issue
 * 31). */
static inline void wire_copy_short(void *dst, const void *src, size_t n) {
  if (n >= 8 && n <= 16)
    wire_copy_8_to_16(dst, src, n);
  else if (n < 8)
    wire_copy_upto7(dst, src, n);
  else
    memcpy(dst, src, n);
}

/* Writes v as a varint at out (at most 10 bytes); returns the end. */
static inline uint8_t *wire_put_varint(uint8_t *out, uint64_t v) {
  while (v >= 0x80) {
    *out++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *out++ = (uint8_t)v;
  return out;
}

#endif
