/* Address URLs: parse "tcp://host:port", "tcp://[v6]:port",
 * "unix:///path" into socket addresses, and name connected peers.
 * Must never resolve names over the network: only numeric hosts and
 * "localhost" (a blocking resolver has no place on the loop thread). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "hoptrace/error.h"
#include "transport/internal.h"

static int parse_port(const char *s, uint16_t *port) {
  if (*s == '\0' || strlen(s) > 5)
    return HT_EADDR;
  unsigned long v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9')
      return HT_EADDR;
    v = v * 10 + (unsigned long)(*p - '0');
  }
  if (v > 65535)
    return HT_EADDR;
  *port = (uint16_t)v;
  return 0;
}

static int parse_tcp(const char *hostport, ht_tr_addr *out) {
  char host[64];
  const char *port;
  if (hostport[0] == '[') {
    const char *end = strchr(hostport, ']');
    if (end == NULL || end[1] != ':' || (size_t)(end - hostport) >= sizeof(host))
      return HT_EADDR;
    memcpy(host, hostport + 1, (size_t)(end - hostport - 1));
    host[end - hostport - 1] = '\0';
    port = end + 2;
  } else {
    const char *colon = strrchr(hostport, ':');
    if (colon == NULL || (size_t)(colon - hostport) >= sizeof(host) ||
        colon == hostport)
      return HT_EADDR;
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    if (strchr(host, ':') != NULL) /* bare IPv6 needs brackets */
      return HT_EADDR;
    port = colon + 1;
  }
  uint16_t p;
  if (parse_port(port, &p) != 0)
    return HT_EADDR;
  memset(&out->ss, 0, sizeof(out->ss));
  out->is_unix = false;
  struct sockaddr_in *in4 = (struct sockaddr_in *)&out->ss;
  struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&out->ss;
  if (strcmp(host, "localhost") == 0)
    strcpy(host, "127.0.0.1");
  if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
    in4->sin_family = AF_INET;
    in4->sin_port = htons(p);
    return 0;
  }
  if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(p);
    return 0;
  }
  return HT_EADDR;
}

int ht_tr_addr_parse(const char *url, ht_tr_addr *out) {
  if (url == NULL || out == NULL)
    return HT_EINVAL;
  /* Every byte defined: a TCP address has an empty path, which the
   * listener copies (valgrind found it reading an uninitialised one). */
  memset(out, 0, sizeof(*out));
  if (strncmp(url, "tcp://", 6) == 0)
    return parse_tcp(url + 6, out);
  if (strncmp(url, "unix://", 7) == 0) {
    const char *path = url + 7;
    if (path[0] != '/' || strlen(path) >= sizeof(out->path) ||
        strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
      return HT_EADDR;
    memset(out, 0, sizeof(*out));
    out->is_unix = true;
    strcpy(out->path, path);
    return 0;
  }
  return HT_EADDR;
}

void ht_tr_addr_name(const struct sockaddr *sa, bool is_unix, const char *path,
                  char *buf, size_t cap) {
  if (is_unix) {
    snprintf(buf, cap, "unix://%s", path != NULL ? path : "");
    return;
  }
  char host[INET6_ADDRSTRLEN] = "?";
  unsigned port = 0;
  if (sa->sa_family == AF_INET) {
    const struct sockaddr_in *in4 = (const struct sockaddr_in *)sa;
    inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host));
    port = ntohs(in4->sin_port);
    snprintf(buf, cap, "tcp://%s:%u", host, port);
  } else if (sa->sa_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
    snprintf(buf, cap, "tcp://[%s]:%u", host, port);
  } else {
    snprintf(buf, cap, "tcp://?");
  }
}
