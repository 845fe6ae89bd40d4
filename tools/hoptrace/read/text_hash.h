/* FNV-1a over n bytes of text: the hash the tool's name table and
 * endpoint cache share. */
#ifndef HT_TOOL_TEXT_HASH_H
#define HT_TOOL_TEXT_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t text_hash(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return h;
}

#endif
