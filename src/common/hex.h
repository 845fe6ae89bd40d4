/* Lower-case hex for the text bridges (src/wire/). Internal. */
#ifndef HT_COMMON_HEX_H
#define HT_COMMON_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parses exactly `digits` (1..16) lower-case hex characters. Upper case,
 * signs and spaces are refused. */
bool ht_hex_parse_u64(const char *text, size_t digits, uint64_t *out);

/* Writes `digits` (1..16) lower-case hex characters, zero-padded. */
void ht_hex_format_u64(uint64_t value, size_t digits, char *out);

#endif
