/* JSON escaping and the id and endpoint formats every exporter shares. */
#include "json.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void json_string(FILE *out, const char *s) {
  const unsigned char *start = (const unsigned char *)(s ? s : "");
  fputc('"', out);
  for (const unsigned char *p = start; *p; p++) {
    switch (*p) {
    case '"': fputs("\\\"", out); break;
    case '\\': fputs("\\\\", out); break;
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    case '/':
      if (p != start && p[-1] == '<')
        fputs("\\/", out);
      else
        fputc('/', out);
      break;
    default:
      if (*p < 0x20 || *p == 0x7f)
        fprintf(out, "\\u%04x", *p);
      else
        fputc(*p, out);
    }
  }
  fputc('"', out);
}

void json_hex64(FILE *out, uint64_t v) { fprintf(out, "\"%016" PRIx64 "\"", v); }

void json_trace_id(FILE *out, uint64_t hi, uint64_t lo, int short_ok) {
  if (short_ok && hi == 0)
    fprintf(out, "\"%016" PRIx64 "\"", lo);
  else
    fprintf(out, "\"%016" PRIx64 "%016" PRIx64 "\"", hi, lo);
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
