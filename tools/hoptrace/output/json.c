/* JSON escaping and the id and endpoint formats every exporter shares. */
#include "output/json.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "read/text_hash.h"
#include "output/utf8.h"

/* Bytes that need an escape: controls, DEL, '"', '\\', '<' (as \u003c:
 * the HTML page embeds this JSON in a <script> element, which "</script"
 * would close and "<!--<script" would keep open to the end of the page),
 * and every non-ASCII byte (its sequence is
 * checked: a trace's strings are a peer's bytes, and one invalid
 * sequence makes a collector reject the whole document). Safe runs go
 * out with one fwrite: per-byte stdio calls were a fifth of an export's
 * instructions. */
static int needs_escape(unsigned char c) {
  return c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<';
}

void json_string(obuf *out, const char *s) {
  const unsigned char *start = (const unsigned char *)(s ? s : "");
  const unsigned char *p = start;
  ob_putc(out, '"');
  for (;;) {
    const unsigned char *run = p;
    while (*p && !needs_escape(*p))
      p++;
    if (p > run)
      ob_write(out, run, (size_t)(p - run));
    if (*p == '\0')
      break;
    switch (*p) {
    case '"': ob_puts(out, "\\\""); break;
    case '\\': ob_puts(out, "\\\\"); break;
    case '\n': ob_puts(out, "\\n"); break;
    case '\r': ob_puts(out, "\\r"); break;
    case '\t': ob_puts(out, "\\t"); break;
    case '<': ob_puts(out, "\\u003c"); break;
    default: {
      if (*p >= 0x80) {
        size_t n = utf8_sequence(p);
        if (n == 0) {
          ob_puts(out, UTF8_REPLACEMENT);
          out->replaced++;
          break;
        }
        if (n > 2 || p[0] != 0xc2 || p[1] >= 0xa0) {
          ob_write(out, p, n);
          p += n - 1;
          break;
        }
        p++; /* a C1 control (U+0080..U+009F): escaped like C0 */
      }
      static const char hex[] = "0123456789abcdef";
      char u[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
      ob_write(out, u, sizeof(u));
    }
    }
    p++;
  }
  ob_putc(out, '"');
}

static char *hex16(char *at, uint64_t v) {
  static const char hex[] = "0123456789abcdef";
  for (int i = 15; i >= 0; i--, v >>= 4)
    at[i] = hex[v & 15];
  return at + 16;
}

void json_hex64(obuf *out, uint64_t v) {
  char buf[18];
  buf[0] = '"';
  *hex16(buf + 1, v) = '"';
  ob_write(out, buf, sizeof(buf));
}

void json_trace_id(obuf *out, uint64_t hi, uint64_t lo, int short_ok) {
  if (short_ok && hi == 0) {
    json_hex64(out, lo);
    return;
  }
  char buf[34];
  buf[0] = '"';
  *hex16(hex16(buf + 1, hi), lo) = '"';
  ob_write(out, buf, sizeof(buf));
}

static char *i64_digits(char *end, int64_t v) {
  char *p = end;
  /* via unsigned so INT64_MIN needs no special case */
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do {
    *--p = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0)
    *--p = '-';
  return p;
}

void json_i64_string(obuf *out, int64_t v) {
  char buf[24];
  char *end = buf + sizeof(buf) - 1;
  *end = '"';
  char *p = i64_digits(end, v);
  *--p = '"';
  ob_write(out, p, (size_t)(end + 1 - p));
}

void json_i64(obuf *out, int64_t v) {
  char buf[24];
  char *end = buf + sizeof(buf), *p = i64_digits(end, v);
  ob_write(out, p, (size_t)(end - p));
}

void endpoint_parse(const char *endpoint, endpoint_parts *out) {
  memset(out, 0, sizeof(*out));
  if (endpoint == NULL || strncmp(endpoint, "tcp://", 6) != 0)
    return;
  const char *host = endpoint + 6;
  const char *port = NULL;
  if (host[0] == '[') {
    const char *close = strchr(host, ']');
    if (close == NULL || (size_t)(close - host - 1) >= sizeof(out->ipv6))
      return;
    memcpy(out->ipv6, host + 1, (size_t)(close - host - 1));
    port = close[1] == ':' ? close + 2 : NULL;
  } else {
    const char *colon = strrchr(host, ':');
    size_t len = colon ? (size_t)(colon - host) : strlen(host);
    if (len >= sizeof(out->ipv4))
      return;
    memcpy(out->ipv4, host, len);
    port = colon ? colon + 1 : NULL;
  }
  if (port != NULL)
    out->port = atoi(port);
  unsigned char addr[16];
  if (out->ipv4[0] && inet_pton(AF_INET, out->ipv4, addr) != 1)
    out->ipv4[0] = '\0'; /* a host name, not an address */
  if (out->ipv6[0] && inet_pton(AF_INET6, out->ipv6, addr) != 1)
    out->ipv6[0] = '\0';
}

const endpoint_parts *endpoint_parse_cached(endpoint_cache *cache, const char *endpoint,
                                            endpoint_parts *scratch) {
  size_t len = endpoint != NULL ? strlen(endpoint) : 0;
  if (len == 0 || len >= sizeof(cache->slot[0].text)) {
    endpoint_parse(endpoint, scratch);
    return scratch;
  }
  endpoint_cache_slot *slot = &cache->slot[text_hash(endpoint, len) % ENDPOINT_CACHE_SLOTS];
  if (strcmp(slot->text, endpoint) != 0) {
    endpoint_parse(endpoint, &slot->parts);
    memcpy(slot->text, endpoint, len + 1);
  }
  return &slot->parts;
}

void json_ns_as_us(obuf *out, int64_t ns) {
  char buf[32];
  char *end = buf + sizeof(buf), *p = end;
  uint64_t u = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns; /* INT64_MIN too */
  for (int i = 0; i < 3; i++, u /= 10)
    *--p = (char)('0' + u % 10);
  *--p = '.';
  do {
    *--p = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (ns < 0)
    *--p = '-';
  ob_write(out, p, (size_t)(end - p));
}
