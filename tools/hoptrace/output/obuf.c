/* Output buffer (obuf.h). */
#include "output/obuf.h"

#include <stdarg.h>
#include <stdlib.h>

obuf *obuf_new(FILE *file) {
  obuf *b = malloc(sizeof(*b));
  if (b == NULL)
    return NULL;
  b->p = b->buf;
  b->end = b->buf + sizeof(b->buf);
  b->file = file;
  b->error = false;
  return b;
}

void obuf_free(obuf *b) { free(b); }

static void drain(obuf *b) {
  size_t n = (size_t)(b->p - b->buf);
  if (n > 0 && !b->error && fwrite(b->buf, 1, n, b->file) != n)
    b->error = true;
  b->p = b->buf;
}

void obuf_write_slow(obuf *b, const void *s, size_t n) {
  drain(b);
  if (n >= sizeof(b->buf)) { /* bigger than the buffer: straight through */
    if (!b->error && fwrite(s, 1, n, b->file) != n)
      b->error = true;
    return;
  }
  memcpy(b->p, s, n);
  b->p += n;
}

void ob_printf(obuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t room = (size_t)(b->end - b->p);
  int n = vsnprintf(b->p, room, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->error = true;
    return;
  }
  if ((size_t)n < room) {
    b->p += n;
    return;
  }
  char *text = malloc((size_t)n + 1); /* did not fit: format again */
  if (text == NULL) {
    b->error = true;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(text, (size_t)n + 1, fmt, ap);
  va_end(ap);
  ob_write(b, text, (size_t)n);
  free(text);
}

int obuf_flush(obuf *b) {
  drain(b);
  if (fflush(b->file) != 0)
    b->error = true;
  return b->error ? -1 : 0;
}

int obuf_error(const obuf *b) { return b->error || ferror(b->file); }
