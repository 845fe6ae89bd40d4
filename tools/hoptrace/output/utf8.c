/* UTF-8 checks and the terminal-safe form of trace strings (utf8.h). */
#include "output/utf8.h"

#include <stdlib.h>
#include <string.h>

static bool cont(unsigned char c) { return (c & 0xc0) == 0x80; }

size_t utf8_sequence(const unsigned char *p) {
  unsigned char c = p[0];
  if (c >= 0xc2 && c <= 0xdf)
    return cont(p[1]) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    /* E0: no overlong (A0..); ED: no surrogates (..9F) */
    unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    return p[1] >= lo && p[1] <= hi && cont(p[2]) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    /* F0: no overlong (90..); F4: nothing past U+10FFFF (..8F) */
    unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    return p[1] >= lo && p[1] <= hi && cont(p[2]) && cont(p[3]) ? 4 : 0;
  }
  return 0; /* ASCII is not a multi-byte sequence; 80..C1, F5..FF never start one */
}

/* 1 for ASCII, a valid sequence's length, or 0 */
static size_t sequence_at(const unsigned char *p) { return *p < 0x80 ? 1 : utf8_sequence(p); }

size_t utf8_invalid(const char *s) {
  size_t bad = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    size_t n = sequence_at(p);
    bad += n == 0;
    p += n ? n : 1;
  }
  return bad;
}

void utf8_repair(char *dst, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    size_t n = sequence_at(p);
    memcpy(dst, n ? (const char *)p : UTF8_REPLACEMENT, n ? n : 3);
    dst += n ? n : 3;
    p += n ? n : 1;
  }
  *dst = '\0';
}

static void hex_escape(obuf *out, unsigned c) {
  static const char hex[] = "0123456789abcdef";
  char e[4] = {'\\', 'x', hex[(c >> 4) & 15], hex[c & 15]};
  ob_write(out, e, sizeof(e));
}

void text_escaped(obuf *out, const char *s, size_t len, bool keep_newlines) {
  const unsigned char *p = (const unsigned char *)s, *end = p + len;
  while (p < end) {
    const unsigned char *run = p;
    while (p < end && *p >= 0x20 && *p < 0x7f && *p != '\\')
      p++;
    if (p > run)
      ob_write(out, run, (size_t)(p - run));
    if (p == end)
      break;
    unsigned char c = *p;
    size_t n = c >= 0x80 && (size_t)(end - p) >= 2 ? utf8_sequence(p) : 0;
    if (n > (size_t)(end - p))
      n = 0; /* a sequence cut by len */
    if (c == '\n' && keep_newlines) {
      ob_putc(out, '\n');
    } else if (c == '\\') {
      ob_puts(out, "\\\\");
    } else if (c < 0x80) {
      hex_escape(out, c);
    } else if (n == 2 && c == 0xc2 && p[1] < 0xa0) {
      hex_escape(out, p[1]); /* a C1 control: a terminal acts on it */
    } else if (n > 0) {
      ob_write(out, p, n);
    } else {
      ob_puts(out, UTF8_REPLACEMENT);
      out->replaced++;
      n = 1;
    }
    p += n > 0 ? n : 1;
  }
}

void text_printed(obuf *out, void (*print)(const void *what, FILE *f), const void *what) {
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  if (mem != NULL) {
    print(what, mem);
    fclose(mem);
    if (text != NULL)
      text_escaped(out, text, len, true);
  }
  free(text);
}
