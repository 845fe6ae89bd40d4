/* A span's status after the OpenTelemetry semantic conventions
 * (semconv.h: the rule). hoptrace's codes, names and messages come from
 * <hoptrace/error.h>'s list (macros only: the tool links nothing of the
 * library), so a code the library adds is named here at the next build. */
#include "output/semconv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hoptrace/error.h"
#include "read/event.h"

typedef struct code_text {
  int32_t code;
  const char *name, *message;
} code_text;

static const code_text CODES[] = {
#define HT_CODE_TEXT_(name, value, message) {value, #name, message},
    HT_ERRNO_MAP(HT_CODE_TEXT_)
#undef HT_CODE_TEXT_
};

static const code_text *code_of(int32_t status) {
  for (size_t i = 0; i < sizeof(CODES) / sizeof(CODES[0]); i++)
    if (CODES[i].code == status)
      return &CODES[i];
  return NULL;
}

bool semconv_caller_error(int32_t status) {
  switch (status) {
  /* a malformed or invalid request (gRPC INVALID_ARGUMENT) */
  case HT_EINVAL: case HT_ETRUNCATED: case HT_EFRAMETOOBIG: case HT_EMALFORMED:
  case HT_EVARINT: case HT_EWIRETYPE: case HT_EVERSION: case HT_EMSGTYPE:
  case HT_EBADCONTEXT: case HT_EBADHEADER: case HT_EADDR:
  case HT_ENOENT:     /* NOT_FOUND */
  case HT_EEXIST:     /* ALREADY_EXISTS */
  case HT_EPERM: case HT_EACCES: /* PERMISSION_DENIED */
  case HT_ECONNRESET: case HT_ECLOSED: /* CANCELLED: the caller went away */
    return true;
  default:
    return status > 0 && status < 500; /* an application's own: HTTP's rule */
  }
}

const char *semconv_status_name(int32_t status, char *buf, size_t cap) {
  if (status == 0)
    return "OK";
  const code_text *c = code_of(status);
  if (c != NULL)
    return c->name;
  snprintf(buf, cap, "%d", (int)status);
  return buf;
}

static const tag *find_tag(const span *s, const char *key) {
  for (size_t i = 0; i < s->n_tags; i++)
    if (strcmp(s->tags[i].key, key) == 0)
      return &s->tags[i];
  return NULL;
}

/* The error's name: a code this build knows, else the library's own name
 * for it (key-value "error", "HT_X" -> "X"), else the number. */
static const char *error_type(const span *s, span_outcome *o) {
  if (code_of(s->status) != NULL)
    return semconv_status_name(s->status, o->type_buf, sizeof(o->type_buf));
  const tag *named = find_tag(s, "error");
  if (named != NULL && !named->is_int && strncmp(named->str_value, "HT_E", 4) == 0)
    return named->str_value + 3;
  snprintf(o->type_buf, sizeof(o->type_buf), "%d", (int)s->status);
  return o->type_buf;
}

/* The status the other side returned: a client's reply (its "cr", or the
 * peer's status in "error.status"), a server's reply sent (its "ss").
 * NULL when none came: a local failure, or a request dropped. */
static const char *status_code(const span *s, span_outcome *o) {
  bool client = s->kind == HOP_KIND_CLIENT;
  if (s->kind != HOP_KIND_CLIENT && s->kind != HOP_KIND_SERVER)
    return NULL;
  const tag *peer_status = client ? find_tag(s, "error.status") : NULL;
  if (peer_status != NULL && peer_status->is_int && peer_status->int_value >= INT32_MIN &&
      peer_status->int_value <= INT32_MAX)
    return semconv_status_name((int32_t)peer_status->int_value, o->code_buf,
                               sizeof(o->code_buf));
  if (span_annotation_ns(s, client ? "cr" : "ss") == 0)
    return NULL;
  return semconv_status_name(s->status, o->code_buf, sizeof(o->code_buf));
}

static bool is_error(const span *s) {
  if (s->status == 0)
    return false;
  if (s->kind != HOP_KIND_SERVER && s->kind != HOP_KIND_CONSUMER)
    return true; /* the caller's side: any failure */
  return !semconv_caller_error(s->status);
}

void span_outcome_get(const span *s, span_outcome *o) {
  o->error = is_error(s);
  o->status_code = status_code(s, o);
  o->error_type = NULL;
  o->message = NULL;
  if (s->status == 0)
    return;
  /* the call failed: its error's class, whichever side's fault (a server
   * span answering the caller's error stays UNSET, with error.type) */
  o->error_type = error_type(s, o);
  if (!o->error)
    return;
  const code_text *c = code_of(s->status);
  if (s->status_message != NULL && s->status_message[0] != '\0') {
    o->message = s->status_message;
  } else if (c != NULL) {
    o->message = c->message;
  } else {
    snprintf(o->message_buf, sizeof(o->message_buf), "status %d", (int)s->status);
    o->message = o->message_buf;
  }
}
