/* Lower-case hex codec shared by traceparent and B3. Pure. */
#include "common/hex.h"

static int lower_hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

bool ht_hex_parse_u64(const char *text, size_t digits, uint64_t *out) {
  if (digits == 0 || digits > 16)
    return false;
  uint64_t v = 0;
  for (size_t i = 0; i < digits; i++) {
    int d = lower_hex_value(text[i]);
    if (d < 0)
      return false;
    v = v << 4 | (uint64_t)d;
  }
  *out = v;
  return true;
}

void ht_hex_format_u64(uint64_t value, size_t digits, char *out) {
  static const char alphabet[] = "0123456789abcdef";
  for (size_t i = digits; i > 0; i--) {
    out[i - 1] = alphabet[value & 0xf];
    value >>= 4;
  }
}
