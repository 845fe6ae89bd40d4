/* partial_success_parse (partial.h). */
#include "ship/partial.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "output/utf8.h"
#include "ship/otlp_pb.h"

/* The length of the valid UTF-8 sequence at p, of left bytes, or 0.
 * utf8_sequence reads up to 4 bytes, stopping only at a byte that ends
 * the sequence; a JSON body is not NUL-terminated, so its last bytes are
 * read from a copy that is. */
static size_t sequence_within(const unsigned char *p, size_t left) {
  if (left >= 4)
    return utf8_sequence(p);
  unsigned char tail[4] = {0};
  memcpy(tail, p, left);
  return utf8_sequence(tail);
}

/* Appends the message's text, made safe for a terminal: a valid UTF-8
 * sequence kept whole (C1 controls excepted), any other byte below 0x20,
 * DEL or a byte of no valid sequence as '?'; cut at the bound. */
static void message_add(partial_success *out, size_t *n, const unsigned char *p, size_t len) {
  size_t i = 0;
  while (i < len && !out->cut) {
    size_t seq = p[i] >= 0x80 ? sequence_within(p + i, len - i) : 0;
    if (seq > 0 && p[i] == 0xc2 && p[i + 1] < 0xa0) { /* a C1 control: one '?' */
      i += seq - 1;
      seq = 0;
    }
    if (*n + (seq > 0 ? seq : 1) > PARTIAL_MESSAGE_MAX) {
      memcpy(out->message + *n, "...", 3); /* cut on a whole sequence */
      *n += 3;
      out->cut = true;
      break;
    }
    if (seq > 0) {
      memcpy(out->message + *n, p + i, seq);
      *n += seq;
      i += seq;
      continue;
    }
    unsigned char ch = p[i++];
    out->message[(*n)++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
  }
  out->message[*n] = '\0';
}

/* The counted value from the collector's. */
static void settle(partial_success *out, int64_t reported, bool number, size_t spans) {
  out->reported = reported;
  if (!number || reported < 0) {
    out->impossible = true;
    out->rejected = 0;
  } else if ((uint64_t)reported > spans) {
    out->impossible = true;
    out->rejected = spans;
  } else {
    out->rejected = (uint64_t)reported;
  }
}

/* The JSON value after "key" (whitespace and ':' skipped) within
 * [from, end), or NULL. */
static const char *json_value(const char *from, const char *end, const char *key) {
  size_t k = strlen(key);
  for (const char *p = from; p + k + 2 <= end; p++) {
    if (p[0] != '"' || memcmp(p + 1, key, k) != 0 || p[k + 1] != '"')
      continue;
    p += k + 2;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
      p++;
    if (p >= end || *p != ':')
      continue;
    p++;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
      p++;
    return p < end ? p : NULL;
  }
  return NULL;
}

/* A JSON string's contents at p (past its opening quote), unescaped
 * into the message: \uXXXX of a control or non-ASCII character as '?'. */
static void json_message(partial_success *out, const char *p, const char *end) {
  size_t n = 0;
  out->message[0] = '\0';
  while (p < end && *p != '"' && !out->cut) {
    unsigned char buf[1];
    const unsigned char *from = (const unsigned char *)p;
    size_t len = 1;
    if (*p == '\\' && p + 1 < end) {
      char e = p[1];
      p += 2;
      buf[0] = e == 'n' || e == 't' || e == 'r' || e == 'b' || e == 'f' ? ' ' : (unsigned char)e;
      if (e == 'u') {
        unsigned v = 0;
        int digits = 0;
        while (digits < 4 && p < end && isxdigit((unsigned char)*p)) {
          v = v * 16 + (unsigned)(isdigit((unsigned char)*p) ? *p - '0'
                                                             : tolower((unsigned char)*p) - 'a' + 10);
          p++, digits++;
        }
        buf[0] = v >= 0x20 && v < 0x7f ? (unsigned char)v : '?';
      }
      from = buf;
    } else {
      /* a run of plain bytes: its UTF-8 sequences kept whole */
      const char *q = p; /* at least one byte: a lone '\\' at the end too */
      do
        q++;
      while (q < end && *q != '"' && *q != '\\');
      len = (size_t)(q - p);
      p = q;
    }
    message_add(out, &n, from, len);
  }
  out->message[n] = '\0';
}

static void parse_json(const uint8_t *body, size_t len, size_t spans, partial_success *out) {
  const char *b = (const char *)body, *end = b + len;
  const char *ps = json_value(b, end, "partialSuccess");
  if (ps == NULL || *ps != '{')
    return; /* no partial success: all accepted */
  const char *v = json_value(ps, end, "rejectedSpans");
  if (v != NULL) {
    /* int64 in proto3 JSON: a string ("5") or a number (5) */
    bool quoted = *v == '"';
    const char *digits = v + quoted;
    char num[32];
    size_t k = 0;
    while (digits + k < end && k + 1 < sizeof(num) &&
           (isdigit((unsigned char)digits[k]) || (k == 0 && digits[k] == '-')))
      num[k] = digits[k], k++;
    num[k] = '\0';
    char *stop;
    long long value = strtoll(num, &stop, 10); /* saturated when out of range */
    const char *after = digits + k;
    while (after < end && isdigit((unsigned char)*after))
      after++, value = value < 0 ? LLONG_MIN : LLONG_MAX; /* longer than num: out of range */
    bool number = k > 0 && *stop == '\0' &&
                  (quoted ? after < end && *after == '"'
                          : after >= end || (*after != '.' && *after != 'e' && *after != 'E'));
    settle(out, number ? value : 0, number, spans);
  }
  const char *m = json_value(ps, end, "errorMessage");
  if (m != NULL && *m == '"')
    json_message(out, m + 1, end);
}

static void parse_proto(const uint8_t *body, size_t len, size_t spans, partial_success *out) {
  int64_t rejected = 0;
  char msg[1024];
  if (pb_response_parse(body, len, &rejected, msg, sizeof(msg)) != 0) {
    out->unreadable = true;
    return;
  }
  settle(out, rejected, true, spans);
  size_t n = 0;
  message_add(out, &n, (const unsigned char *)msg, strlen(msg));
}

void partial_success_parse(ship_format format, const uint8_t *body, size_t len, size_t spans,
                           partial_success *out) {
  memset(out, 0, sizeof(*out));
  if (body == NULL)
    len = 0;
  if (format == SHIP_OTLP_PROTO)
    parse_proto(body, len, spans, out);
  else if (format == SHIP_OTLP_JSON && len > 0)
    parse_json(body, len, spans, out);
}
