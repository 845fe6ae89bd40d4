/* ship_config_load (config.h): the OpenTelemetry exporter variables,
 * the signal-specific one first. */
#include "ship/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *otel_env(const char *what) {
  char name[96];
  snprintf(name, sizeof(name), "OTEL_EXPORTER_OTLP_TRACES_%s", what);
  const char *v = getenv(name);
  if (v != NULL && v[0] != '\0')
    return v;
  snprintf(name, sizeof(name), "OTEL_EXPORTER_OTLP_%s", what);
  v = getenv(name);
  return v != NULL && v[0] != '\0' ? v : NULL;
}

/* http(s)://HOST[:PORT][/PATH]: the path's start, or NULL if no URL. */
static const char *url_path(const char *url) {
  const char *rest = strncmp(url, "http://", 7) == 0    ? url + 7
                     : strncmp(url, "https://", 8) == 0 ? url + 8
                                                        : NULL;
  if (rest == NULL || rest[0] == '\0' || rest[0] == '/')
    return NULL;
  for (const char *p = rest; *p; p++)
    if ((unsigned char)*p <= ' ' || *p == 0x7f)
      return NULL;
  const char *slash = strchr(rest, '/');
  return slash ? slash : rest + strlen(rest);
}

static bool host_char(int ch) {
  return isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~' || ch == '%';
}

/* What is wrong with a URL, NULL when nothing: checked before anything
 * starts, since libcurl would only fail each batch as a connection error.
 * http or https, [user@]host (a name, an IPv4 address or a bracketed IPv6
 * one), an optional port 1..65535, no space or control byte. */
static const char *url_problem(const char *url) {
  for (const char *p = url; *p; p++)
    if ((unsigned char)*p <= ' ' || *p == 0x7f)
      return "a space or control byte";
  const char *rest = strncmp(url, "http://", 7) == 0    ? url + 7
                     : strncmp(url, "https://", 8) == 0 ? url + 8
                                                        : NULL;
  if (rest == NULL)
    return "not http:// or https://";
  const char *end = rest + strcspn(rest, "/?#"); /* the authority */
  const char *host = rest;
  for (const char *p = rest; p < end; p++)
    if (*p == '@')
      host = p + 1;
  if (host == end)
    return "no host";
  const char *after; /* past the host */
  if (*host == '[') {
    const char *close = memchr(host, ']', (size_t)(end - host));
    if (close == NULL)
      return "'[' without ']' (an IPv6 address is written [::1])";
    if (close == host + 1)
      return "no host";
    bool zone = false; /* past "%25": a zone id (fe80::1%25eth0) */
    for (const char *p = host + 1; p < close; p++) {
      zone = zone || *p == '%';
      if (zone ? !host_char((unsigned char)*p)
               : !isxdigit((unsigned char)*p) && *p != ':' && *p != '.')
        return "not an IPv6 address between '[' and ']'";
    }
    after = close + 1;
  } else {
    after = host;
    while (after < end && *after != ':') {
      if (*after == '[' || *after == ']')
        return "'[' or ']' outside a bracketed IPv6 address";
      if (!host_char((unsigned char)*after))
        return "a character not allowed in a host name";
      after++;
    }
    if (after == host)
      return "no host";
  }
  if (after == end)
    return NULL;
  if (*after != ':')
    return "unexpected characters after the host";
  const char *port = after + 1;
  if (port == end)
    return "an empty port";
  long value = 0;
  for (const char *p = port; p < end; p++) {
    if (!isdigit((unsigned char)*p))
      return "a port that is not a number";
    if (value <= 65535)
      value = value * 10 + (*p - '0');
  }
  if (value < 1 || value > 65535)
    return "a port outside 1..65535";
  return NULL;
}

static int set_url(ship_config *c, const char *base, const char *add, char *err, size_t cap) {
  const char *problem = url_problem(base);
  const char *path = url_path(base);
  if (problem != NULL || path == NULL) {
    /* the URL as given, its control bytes as '?' (it goes to a terminal) */
    char shown[256];
    size_t n = 0;
    for (const char *p = base; *p && n + 4 < sizeof(shown); p++)
      shown[n++] = (unsigned char)*p < ' ' || *p == 0x7f ? '?' : *p;
    if (base[n] != '\0')
      shown[n++] = '.', shown[n++] = '.', shown[n++] = '.';
    shown[n] = '\0';
    snprintf(err, cap, "'%s' is not a valid http:// or https:// URL: %s", shown,
             problem ? problem : "no host");
    return -1;
  }
  size_t n = strlen(base);
  while (add && n > 0 && base[n - 1] == '/') /* base/ + /v1/traces */
    n--;
  if ((size_t)snprintf(c->url, sizeof(c->url), "%.*s%s", (int)n, base, add ? add : "") >=
      sizeof(c->url)) {
    snprintf(err, cap, "URL too long");
    return -1;
  }
  return 0;
}

static int hexval(int ch) {
  return isdigit(ch) ? ch - '0' : isxdigit(ch) ? tolower(ch) - 'a' + 10 : -1;
}

/* "k=v,k2=v2" (values percent-encoded, W3C baggage style) -> headers. */
static int parse_headers(ship_config *c, const char *text, char *err, size_t cap) {
  const char *p = text;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *eq = memchr(p, '=', len);
    while (len && isspace((unsigned char)*p))
      p++, len--;
    if (len == 0) {
      p += end ? 1 : 0;
      continue;
    }
    if (eq == NULL || eq == p || c->n_headers == SHIP_MAX_HEADERS) {
      snprintf(err, cap, "OTEL_EXPORTER_OTLP_HEADERS: want key=value,... (at most %d)",
               SHIP_MAX_HEADERS);
      return -1;
    }
    char *h = malloc(len + 3);
    if (h == NULL) {
      snprintf(err, cap, "out of memory");
      return -1;
    }
    size_t n = 0;
    for (const char *k = p; k < eq; k++) {
      if (isspace((unsigned char)*k))
        continue;
      if (!isalnum((unsigned char)*k) && !strchr("!#$%&'*+-.^_`|~", *k)) {
        free(h);
        snprintf(err, cap, "OTEL_EXPORTER_OTLP_HEADERS: bad header name");
        return -1;
      }
      h[n++] = *k;
    }
    h[n++] = ':';
    h[n++] = ' ';
    for (const char *v = eq + 1; v < p + len; v++) {
      int ch = (unsigned char)*v;
      if (ch == '%' && v + 2 < p + len && hexval(v[1]) >= 0 && hexval(v[2]) >= 0) {
        ch = hexval(v[1]) * 16 + hexval(v[2]);
        v += 2;
      }
      if (ch < ' ' || ch == 0x7f) { /* no header injection */
        free(h);
        snprintf(err, cap, "OTEL_EXPORTER_OTLP_HEADERS: control character in a value");
        return -1;
      }
      h[n++] = (char)ch;
    }
    h[n] = '\0';
    c->headers[c->n_headers++] = h;
    p += len + (end ? 1 : 0);
  }
  return 0;
}

/* headers_file (config.h): each line through parse_headers. */
static int load_headers_file(ship_config *c, const char *path, char *err, size_t cap) {
  FILE *f = fopen(path, "re");
  if (f == NULL) {
    snprintf(err, cap, "--headers-file %s: %s", path, strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    snprintf(err, cap, "--headers-file %s: readable by others (chmod 600 it)", path);
    fclose(f);
    return -1;
  }
  char line[8192];
  int rc = 0, n = 0;
  while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
    n++;
    size_t len = strlen(line);
    if (len == sizeof(line) - 1 && line[len - 1] != '\n') {
      snprintf(err, cap, "--headers-file %s:%d: line longer than %zu bytes", path, n,
               sizeof(line) - 2);
      rc = -1;
      break;
    }
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] == '\0' || line[0] == '#')
      continue;
    char why[256];
    if (parse_headers(c, line, why, sizeof(why)) != 0) {
      snprintf(err, cap, "--headers-file %s:%d: %s", path, n, why);
      rc = -1;
    }
  }
  if (rc == 0 && ferror(f)) {
    snprintf(err, cap, "--headers-file %s: %s", path, strerror(errno));
    rc = -1;
  }
  fclose(f);
  return rc;
}

int ship_config_load(ship_config *c, const char *to, const char *format,
                     const char *headers_file, char *err, size_t cap) {
  memset(c, 0, sizeof(*c));
  if (strcmp(format, "otlp") == 0)
    c->format = SHIP_OTLP_PROTO;
  else if (strcmp(format, "otlp-json") == 0)
    c->format = SHIP_OTLP_JSON;
  else if (strcmp(format, "zipkin") == 0)
    c->format = SHIP_ZIPKIN;
  else {
    snprintf(err, cap, "--to-format otlp|otlp-json|zipkin, not '%s'", format);
    return -1;
  }
  const char *path = c->format == SHIP_ZIPKIN ? "/api/v2/spans" : "/v1/traces";
  int rc;
  if (strcmp(to, "env") == 0) {
    const char *traces = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    const char *base = getenv("OTEL_EXPORTER_OTLP_ENDPOINT");
    if (traces && traces[0])
      rc = set_url(c, traces, NULL, err, cap);
    else
      rc = set_url(c, base && base[0] ? base : "http://localhost:4318", path, err, cap);
  } else {
    const char *p = url_path(to);
    rc = set_url(c, to, p && (p[0] == '\0' || strcmp(p, "/") == 0) ? path : NULL, err, cap);
  }
  const char *v;
  if (rc == 0 && (v = otel_env("HEADERS")) != NULL)
    rc = parse_headers(c, v, err, cap);
  if (rc == 0 && headers_file != NULL)
    rc = load_headers_file(c, headers_file, err, cap);
  c->timeout_ms = 10000;
  if (rc == 0 && (v = otel_env("TIMEOUT")) != NULL) {
    char *end;
    errno = 0;
    long ms = strtol(v, &end, 10);
    if (!isdigit((unsigned char)v[0]) || *end || errno || ms < 1 || ms > 3600000) {
      snprintf(err, cap, "OTEL_EXPORTER_OTLP_TIMEOUT: milliseconds from 1 to 3600000");
      rc = -1;
    }
    c->timeout_ms = ms;
  }
  c->gzip = true;
  if (rc == 0 && (v = otel_env("COMPRESSION")) != NULL) {
    if (strcmp(v, "gzip") != 0 && strcmp(v, "none") != 0) {
      snprintf(err, cap, "OTEL_EXPORTER_OTLP_COMPRESSION: gzip or none");
      rc = -1;
    }
    c->gzip = strcmp(v, "gzip") == 0;
  }
  if (rc == 0 && (v = otel_env("CERTIFICATE")) != NULL)
    snprintf(c->ca_file, sizeof(c->ca_file), "%s", v);
  if (rc != 0)
    ship_config_free(c);
  return rc;
}

void ship_config_free(ship_config *c) {
  for (int i = 0; i < c->n_headers; i++)
    free(c->headers[i]);
  c->n_headers = 0;
}
