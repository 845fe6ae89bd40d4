/* The OpenTelemetry semantic conventions the outputs follow, in one
 * place: the attribute names (RPC spans, v1.45.0), and what a span's
 * status becomes (ERROR or UNSET, error.type, rpc.status_code, the
 * description). The OTLP file and push (otlp_map.c), Zipkin's tags
 * (out_zipkin.c), the waterfall (out_html.c) and the report ask here;
 * none decides on its own.
 *
 * The rule (RPC conventions, with gRPC's list of server errors as the
 * model for hoptrace's codes):
 * - a CLIENT (or PRODUCER) span with a status is ERROR, whatever failed:
 *   refused before sending, send failed, timed out, reset, an error reply;
 * - a SERVER (or CONSUMER) span is ERROR only for a fault of the server:
 *   it dropped the request or could not answer it (HT_ETIMEDOUT,
 *   HT_ESHUTDOWN, HT_ENOMEM, HT_EQUEUEFULL, ...), failed inside
 *   (HT_EIO, a call of its own failed: HT_EPEERERROR, ...), has no handler
 *   (HT_ENOHANDLER), or a code this build does not know; an error reply
 *   that is the caller's problem (a malformed or invalid request, not
 *   found, exists, not permitted, the caller went away: semconv_caller_error)
 *   stays UNSET, its code in rpc.status_code only. A positive status is an
 *   application's own: a server error from 500 up (HTTP's rule), else the
 *   caller's;
 * - an INTERNAL span with a status is ERROR.
 * error.type, set whenever the status is not 0 (the call failed, ERROR
 * or, for the caller's fault on a server span, UNSET: the conventions ask
 * it of every failed operation), is the error's name without "HT_"
 * ("ENOTCONN"); a code this
 * build does not know takes the span's "error" key-value ("HT_X" -> "X")
 * or its decimal value. */
#ifndef HT_TOOL_SEMCONV_H
#define HT_TOOL_SEMCONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "assemble/model.h"

#define SEMCONV_VERSION "1.45.0"

#define SC_RPC_SYSTEM_NAME "rpc.system.name" /* was rpc.system (deprecated) */
#define SC_RPC_METHOD "rpc.method"
#define SC_RPC_STATUS_CODE "rpc.status_code"
#define SC_SERVER_ADDRESS "server.address"
#define SC_SERVER_PORT "server.port"
#define SC_PEER_ADDRESS "network.peer.address"
#define SC_PEER_PORT "network.peer.port"
#define SC_ERROR_TYPE "error.type"
#define SC_RPC_SYSTEM_VALUE "hoptrace"

/* What a span's status becomes. Strings point into the span or the
 * struct (valid while both are). */
typedef struct span_outcome {
  bool error;              /* status ERROR; else UNSET (never OK) */
  const char *error_type;  /* error.type: set iff the status is not 0 */
  const char *message;     /* the status description: set iff error */
  const char *status_code; /* rpc.status_code ("OK", "EIO", "404"); NULL: none came */
  char type_buf[32], code_buf[32], message_buf[48];
} span_outcome;

void span_outcome_get(const span *s, span_outcome *o);

/* A status as text: "OK" for 0, the HT_* name without "HT_", else the
 * decimal value; buf: 32 bytes. */
const char *semconv_status_name(int32_t status, char *buf, size_t cap);

/* A hoptrace code that is the caller's problem when a server answers with
 * it (a server span stays UNSET). */
bool semconv_caller_error(int32_t status);

#endif
