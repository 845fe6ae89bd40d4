/* The exporters' output buffer: text is appended with inline copies and
 * goes to the FILE in large writes. Through stdio, one call per JSON
 * token cost more than the formatting itself (half of the writer
 * thread's time). Used by one thread at a time. */
#ifndef HT_TOOL_OBUF_H
#define HT_TOOL_OBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define OBUF_BYTES ((size_t)1 << 16)

typedef struct obuf {
  char *p, *end; /* free part of buf */
  FILE *file;
  bool error; /* a write failed: the rest is dropped */
  bool discard; /* obuf_discard: the rest is dropped, not an error */
  int err;      /* errno of the first failed write (0: none seen) */
  unsigned long long replaced; /* invalid UTF-8 sequences written as U+FFFD (utf8.h) */
  char buf[OBUF_BYTES];
} obuf;

/* NULL when out of memory. The FILE stays the caller's. */
obuf *obuf_new(FILE *file);
void obuf_free(obuf *b);
/* Writes what is buffered and flushes the FILE: 0, or -1 when any write
 * so far failed. */
int obuf_flush(obuf *b);
/* 1 when a write failed. */
int obuf_error(const obuf *b);
/* The errno of the first failed write, taken when it failed (later
 * calls, e.g. stopping the decoders, may change errno); EIO when the
 * FILE says it failed without one. 0 when nothing failed. */
int obuf_errno(const obuf *b);
/* Drops what is buffered and everything written from now on (an
 * interrupted run: its output must not end as a complete document). */
void obuf_discard(obuf *b);

void obuf_write_slow(obuf *b, const void *s, size_t n);
void ob_printf(obuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline void ob_write(obuf *b, const void *s, size_t n) {
  if ((size_t)(b->end - b->p) >= n) {
    memcpy(b->p, s, n);
    b->p += n;
  } else {
    obuf_write_slow(b, s, n);
  }
}

static inline void ob_puts(obuf *b, const char *s) { ob_write(b, s, strlen(s)); }

static inline void ob_putc(obuf *b, char c) {
  if (b->p < b->end)
    *b->p++ = c;
  else
    obuf_write_slow(b, &c, 1);
}

#endif
