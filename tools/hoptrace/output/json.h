/* Minimal streaming JSON writing helpers. */
#ifndef HT_TOOL_JSON_H
#define HT_TOOL_JSON_H

#include <stdint.h>

#include "output/obuf.h"

/* A JSON string literal, escaped; NULL writes "". `</` is escaped too so
 * the text can sit inside an HTML <script>. Always valid UTF-8: an
 * invalid sequence's bytes become U+FFFD each, counted in out->replaced. */
void json_string(obuf *out, const char *s);
/* "%016llx" in quotes. */
void json_hex64(obuf *out, uint64_t v);
/* 32 hex digits (128-bit) in quotes; with short_ok and hi == 0, 16. */
void json_trace_id(obuf *out, uint64_t hi, uint64_t lo, int short_ok);
/* A decimal integer ("%" PRId64, without printf). */
void json_i64(obuf *out, int64_t v);

/* Parsed endpoint "tcp://1.2.3.4:80", "tcp://[::1]:80", "unix:///p". */
typedef struct endpoint_parts {
  char ipv4[16];
  char ipv6[48];
  int port; /* 0 when none */
} endpoint_parts;
void endpoint_parse(const char *endpoint, endpoint_parts *out);

/* endpoint_parse through a small cache: exporters see the same few
 * endpoints on every span. Compared by text, so a freed and reused
 * string is never mistaken for another. */
#define ENDPOINT_CACHE_SLOTS 64
typedef struct endpoint_cache_slot {
  char text[64]; /* "" when empty */
  endpoint_parts parts;
} endpoint_cache_slot;
typedef struct endpoint_cache {
  endpoint_cache_slot slot[ENDPOINT_CACHE_SLOTS];
} endpoint_cache;
const endpoint_parts *endpoint_parse_cached(endpoint_cache *cache, const char *endpoint,
                                            endpoint_parts *scratch);

/* A decimal integer in quotes (a JSON string). */
void json_i64_string(obuf *out, int64_t v);

/* Nanoseconds as microseconds with exactly three decimals ("-0.001"),
 * from the integer: through a double, epoch times move by up to 256 ns. */
void json_ns_as_us(obuf *out, int64_t ns);

#endif
