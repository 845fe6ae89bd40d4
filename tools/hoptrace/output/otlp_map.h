/* The one span -> OTLP mapping (semantic conventions, kind, status,
 * resource) that both OTLP encodings use: the JSON file (out_otlp.c) and
 * the protobuf push (ship/otlp_pb.c). Each encoding only writes what this
 * hands it. */
#ifndef HT_TOOL_OTLP_MAP_H
#define HT_TOOL_OTLP_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include "assemble/model.h"

typedef struct otlp_attr {
  const char *key;
  bool is_int;
  int64_t int_value;
  const char *str_value;
} otlp_attr;

typedef void (*otlp_attr_fn)(void *arg, const otlp_attr *a);

enum { OTLP_STATUS_UNSET = 0, OTLP_STATUS_OK = 1, OTLP_STATUS_ERROR = 2 };

/* What a span becomes, apart from its attributes. Strings point into
 * the span or into the struct (valid while both are). */
typedef struct otlp_span_fields {
  int kind;            /* Span.SpanKind */
  int64_t start_ns, end_ns;
  int status_code;     /* ERROR or UNSET, by semconv.h's rule */
  const char *status_message; /* ERROR's description; NULL when UNSET */
  char status_buf[48];
} otlp_span_fields;

void otlp_span_fields_get(const span *s, otlp_span_fields *f);

/* Every attribute of s, in a fixed order: its own tags, then the RPC
 * conventions (semconv.h: rpc.system.name, rpc.method, rpc.status_code,
 * server.*, network.peer.*, error.type), hoptrace's
 * own (endpoint, clock, incomplete, a root's sampling probability). */
void otlp_span_attrs(const trace *t, const span *s, otlp_attr_fn fn, void *arg);

/* The resource a span belongs to: service, host, process. */
void otlp_resource_attrs(const span *s, otlp_attr_fn fn, void *arg);
bool otlp_same_resource(const span *a, const span *b);
uint64_t otlp_resource_hash(const span *s);

#define OTLP_SCOPE_NAME "hoptrace"

#endif
