/* Output buffer (obuf.h). */
#include "output/obuf.h"

#include <errno.h>
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
  b->discard = false;
  b->err = 0;
  b->replaced = 0;
  return b;
}

void obuf_free(obuf *b) { free(b); }

static void failed(obuf *b) {
  if (!b->error)
    b->err = errno != 0 ? errno : EIO;
  b->error = true;
}

/* fwrite leaves errno as the failed write(2) left it */
static void put(obuf *b, const void *s, size_t n) {
  if (n == 0 || b->error || b->discard)
    return;
  errno = 0;
  if (fwrite(s, 1, n, b->file) != n)
    failed(b);
}

static void drain(obuf *b) {
  put(b, b->buf, (size_t)(b->p - b->buf));
  b->p = b->buf;
}

void obuf_write_slow(obuf *b, const void *s, size_t n) {
  drain(b);
  if (n >= sizeof(b->buf)) { /* bigger than the buffer: straight through */
    put(b, s, n);
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
    failed(b);
    return;
  }
  if ((size_t)n < room) {
    b->p += n;
    return;
  }
  char *text = malloc((size_t)n + 1); /* did not fit: format again */
  if (text == NULL) {
    failed(b);
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
  if (b->discard)
    return b->error ? -1 : 0;
  errno = 0;
  if (fflush(b->file) != 0)
    failed(b);
  return b->error ? -1 : 0;
}

int obuf_error(const obuf *b) { return b->error || ferror(b->file); }

int obuf_errno(const obuf *b) {
  if (b->error)
    return b->err;
  return ferror(b->file) ? EIO : 0;
}

void obuf_discard(obuf *b) {
  b->p = b->buf;
  b->discard = true;
}
