/* A strict JSON (RFC 8259) validator for the fuzz harnesses: what the
 * tool writes must parse anywhere, so this accepts only the grammar
 * (no trailing commas, no NaN, no control characters in strings, valid
 * UTF-8), nested at most 256 deep. */
#ifndef HT_FUZZ_JSON_VALID_H
#define HT_FUZZ_JSON_VALID_H

#include <stdbool.h>
#include <stddef.h>

/* true when s[0..n) is one JSON value with only whitespace around it;
 * else false, with the offset of the first error in *at. */
bool json_valid(const char *s, size_t n, size_t *at);

#endif
