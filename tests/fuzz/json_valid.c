/* Recursive descent over RFC 8259's grammar (json_valid.h). */
#include "json_valid.h"

#include <stdint.h>
#include <string.h>

#define MAX_DEPTH 256

typedef struct parser {
  const unsigned char *p, *end;
  int depth;
} parser;

static void ws(parser *q) {
  while (q->p < q->end && (*q->p == ' ' || *q->p == '\t' || *q->p == '\n' || *q->p == '\r'))
    q->p++;
}

static bool lit(parser *q, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(q->end - q->p) < n || memcmp(q->p, word, n) != 0)
    return false;
  q->p += n;
  return true;
}

static bool digits(parser *q) {
  const unsigned char *start = q->p;
  while (q->p < q->end && *q->p >= '0' && *q->p <= '9')
    q->p++;
  return q->p > start;
}

static bool number(parser *q) {
  if (q->p < q->end && *q->p == '-')
    q->p++;
  if (q->p < q->end && *q->p == '0')
    q->p++;
  else if (!digits(q))
    return false;
  if (q->p < q->end && *q->p == '.') {
    q->p++;
    if (!digits(q))
      return false;
  }
  if (q->p < q->end && (*q->p == 'e' || *q->p == 'E')) {
    q->p++;
    if (q->p < q->end && (*q->p == '+' || *q->p == '-'))
      q->p++;
    if (!digits(q))
      return false;
  }
  return true;
}

static bool hex4(parser *q, unsigned *v) {
  *v = 0;
  for (int i = 0; i < 4; i++, q->p++) {
    if (q->p >= q->end)
      return false;
    unsigned c = *q->p;
    unsigned d = c >= '0' && c <= '9' ? c - '0'
                 : c >= 'a' && c <= 'f' ? c - 'a' + 10
                 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 16;
    if (d == 16)
      return false;
    *v = *v << 4 | d;
  }
  return true;
}

/* One UTF-8 sequence of 2-4 bytes, shortest form, no surrogates. */
static bool utf8_seq(parser *q) {
  unsigned c = *q->p, n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
  if (c < 0xc2 || c > 0xf4 || (size_t)(q->end - q->p) <= n)
    return false;
  uint32_t cp = c & (0x3f >> n);
  for (unsigned i = 1; i <= n; i++) {
    if ((q->p[i] & 0xc0) != 0x80)
      return false;
    cp = cp << 6 | (q->p[i] & 0x3f);
  }
  static const uint32_t least[] = {0, 0x80, 0x800, 0x10000};
  if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return false;
  q->p += n + 1;
  return true;
}

static bool string(parser *q) {
  q->p++; /* the opening quote */
  while (q->p < q->end) {
    unsigned c = *q->p;
    if (c == '"') {
      q->p++;
      return true;
    }
    if (c < 0x20)
      return false;
    if (c >= 0x80) {
      if (!utf8_seq(q))
        return false;
      continue;
    }
    q->p++;
    if (c != '\\')
      continue;
    if (q->p >= q->end)
      return false;
    c = *q->p++;
    if (c == 'u') {
      unsigned v, lo;
      if (!hex4(q, &v))
        return false;
      if (v >= 0xdc00 && v <= 0xdfff)
        return false; /* a low surrogate alone */
      if (v >= 0xd800 && v <= 0xdbff &&
          !(lit(q, "\\u") && hex4(q, &lo) && lo >= 0xdc00 && lo <= 0xdfff))
        return false; /* a high surrogate not followed by a low one */
    } else if (strchr("\"\\/bfnrt", (int)c) == NULL || c == '\0') {
      return false;
    }
  }
  return false;
}

static bool value(parser *q);

/* An object or an array: its members, separated by commas. */
static bool container(parser *q, char close, bool keyed) {
  if (++q->depth > MAX_DEPTH)
    return false;
  q->p++;
  ws(q);
  if (q->p < q->end && *q->p == close) {
    q->p++;
    q->depth--;
    return true;
  }
  for (;;) {
    if (keyed) {
      ws(q);
      if (q->p >= q->end || *q->p != '"' || !string(q))
        return false;
      ws(q);
      if (q->p >= q->end || *q->p++ != ':')
        return false;
    }
    if (!value(q))
      return false;
    ws(q);
    if (q->p >= q->end)
      return false;
    if (*q->p == close) {
      q->p++;
      q->depth--;
      return true;
    }
    if (*q->p++ != ',')
      return false;
  }
}

static bool value(parser *q) {
  ws(q);
  if (q->p >= q->end)
    return false;
  switch (*q->p) {
  case '{': return container(q, '}', true);
  case '[': return container(q, ']', false);
  case '"': return string(q);
  case 't': return lit(q, "true");
  case 'f': return lit(q, "false");
  case 'n': return lit(q, "null");
  default: return number(q);
  }
}

bool json_valid(const char *s, size_t n, size_t *at) {
  parser q = {(const unsigned char *)s, (const unsigned char *)s + n, 0};
  bool ok = value(&q);
  if (ok) {
    ws(&q);
    ok = q.p == q.end;
  }
  if (at != NULL)
    *at = (size_t)(q.p - (const unsigned char *)s);
  return ok;
}
