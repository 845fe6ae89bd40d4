/* Where and how spans are pushed: the --to URL (or the OpenTelemetry
 * environment), headers, timeout, compression, CA file. Resolved once,
 * before the run; every error says which setting is wrong. */
#ifndef HT_SHIP_CONFIG_H
#define HT_SHIP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

typedef enum ship_format { SHIP_OTLP_PROTO, SHIP_OTLP_JSON, SHIP_ZIPKIN } ship_format;

#define SHIP_MAX_HEADERS 32

typedef struct ship_config {
  ship_format format;
  char url[2048];
  char *headers[SHIP_MAX_HEADERS]; /* "Key: value", malloc'd */
  int n_headers;
  long timeout_ms;
  bool gzip;
  char ca_file[1024]; /* "" : the system's */
} ship_config;

/* to: a URL (http:// or https://; with no path, the format's path is
 * added: /v1/traces, /api/v2/spans) or "env": OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
 * as is, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else
 * http://localhost:4318/v1/traces. format: "otlp" (protobuf), "otlp-json"
 * or "zipkin". The rest from OTEL_EXPORTER_OTLP_[TRACES_]HEADERS, _TIMEOUT
 * (ms, default 10000), _COMPRESSION (gzip, the default, or none),
 * _CERTIFICATE. headers_file (NULL: none): more headers, a file of
 * "key=value" lines (values percent-encoded, as in the environment
 * variable; '#' starts a comment line), so that a secret need not be on
 * a command line (seen by every user in ps) nor in the environment; a
 * file others may read is refused. 0, or -1 with the reason in err. */
int ship_config_load(ship_config *c, const char *to, const char *format,
                     const char *headers_file, char *err, size_t cap);
void ship_config_free(ship_config *c);

#endif
