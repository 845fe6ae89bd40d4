/* Strings taken from a trace are a peer's bytes: whatever they hold,
 * what hoptrace writes is valid UTF-8 (a collector rejects a whole
 * upload for one bad byte) and, on a terminal, inert (no control byte
 * reaches it). Invalid sequences become U+FFFD, counted in the obuf. */
#ifndef HT_TOOL_UTF8_H
#define HT_TOOL_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "output/obuf.h"

/* U+FFFD REPLACEMENT CHARACTER, encoded */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"

/* The length (2 to 4) of the well-formed multi-byte UTF-8 sequence at p
 * (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF),
 * or 0. Reads no further than a byte that ends it (a NUL never
 * continues a sequence). */
size_t utf8_sequence(const unsigned char *p);

/* How many bytes of s belong to no valid sequence; utf8_repair writes s
 * with each such byte as U+FFFD (as the JSON writer does) into dst, of
 * strlen(s) + 2 * utf8_invalid(s) + 1 bytes. For writers that do not
 * escape (the OTLP protobuf's `string` fields). */
size_t utf8_invalid(const char *s);
void utf8_repair(char *dst, const char *s);

/* s as plain text: valid UTF-8 with every control byte (C0, DEL, and
 * the C1 controls U+0080..U+009F) written as \xNN, a backslash as \\,
 * and newlines kept when keep_newlines. s[len] is readable (a NUL, or
 * more text). */
void text_escaped(obuf *out, const char *s, size_t len, bool keep_newlines);

/* What print writes to a FILE (host tables naming a trace's hosts),
 * escaped as text_escaped with newlines kept, into out. */
void text_printed(obuf *out, void (*print)(const void *what, FILE *f), const void *what);

#endif
