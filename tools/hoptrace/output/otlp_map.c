/* Span -> OTLP attributes and fields (otlp_map.h), after the
 * OpenTelemetry semantic conventions (semconv.h: the names and the status
 * rule): RPC spans carry rpc.system.name, rpc.method and rpc.status_code,
 * client spans server.address/server.port, both network.peer.*; ERROR
 * comes with error.type and a description, otherwise the status is UNSET
 * (the specification leaves OK to operators). */
#include "output/otlp_map.h"

#include <stdio.h>
#include <string.h>

#include "read/text_hash.h"
#include "hoptrace/version.h"
#include "output/json.h"
#include "output/output.h"
#include "output/semconv.h"
#include "read/event.h"

static int otlp_kind(int kind) {
  switch (kind) {
  case HOP_KIND_SERVER: return 2;
  case HOP_KIND_CLIENT: return 3;
  case HOP_KIND_PRODUCER: return 4;
  case HOP_KIND_CONSUMER: return 5;
  default: return 1; /* SPAN_KIND_INTERNAL */
  }
}

void otlp_span_fields_get(const span *s, otlp_span_fields *f) {
  f->kind = otlp_kind(s->kind);
  f->start_ns = span_shown_start_ns(s);
  f->end_ns = s->ended ? s->end_ns : f->start_ns;
  span_outcome o;
  span_outcome_get(s, &o);
  f->status_code = o.error ? OTLP_STATUS_ERROR : OTLP_STATUS_UNSET;
  f->status_message = NULL;
  if (o.error && o.message == o.message_buf) { /* made up here: copied */
    snprintf(f->status_buf, sizeof(f->status_buf), "%s", o.message);
    f->status_message = f->status_buf;
  } else if (o.error) {
    f->status_message = o.message;
  }
}

static void str(otlp_attr_fn fn, void *arg, const char *key, const char *value) {
  otlp_attr a = {.key = key, .str_value = value};
  fn(arg, &a);
}

static void num(otlp_attr_fn fn, void *arg, const char *key, int64_t value) {
  otlp_attr a = {.key = key, .is_int = true, .int_value = value};
  fn(arg, &a);
}

/* The peer as address and port; a peer that is no IP endpoint (a unix
 * socket, a host name) keeps its text in hoptrace.peer. */
static void peer_attrs(const span *s, otlp_attr_fn fn, void *arg) {
  endpoint_parts p;
  endpoint_parse(s->peer, &p);
  const char *addr = p.ipv4[0] ? p.ipv4 : p.ipv6[0] ? p.ipv6 : NULL;
  if (addr == NULL) {
    str(fn, arg, "hoptrace.peer", s->peer);
    return;
  }
  if (s->kind == HOP_KIND_CLIENT) {
    str(fn, arg, SC_SERVER_ADDRESS, addr);
    if (p.port > 0)
      num(fn, arg, SC_SERVER_PORT, p.port);
  }
  str(fn, arg, SC_PEER_ADDRESS, addr);
  if (p.port > 0)
    num(fn, arg, SC_PEER_PORT, p.port);
}

void otlp_span_attrs(const trace *t, const span *s, otlp_attr_fn fn, void *arg) {
  for (size_t i = 0; i < s->n_tags; i++) {
    otlp_attr a = {s->tags[i].key, s->tags[i].is_int, s->tags[i].int_value,
                   s->tags[i].str_value};
    fn(arg, &a);
  }
  span_outcome o;
  span_outcome_get(s, &o);
  if (s->kind == HOP_KIND_CLIENT || s->kind == HOP_KIND_SERVER) {
    str(fn, arg, SC_RPC_SYSTEM_NAME, SC_RPC_SYSTEM_VALUE);
    str(fn, arg, SC_RPC_METHOD, s->name ? s->name : "unknown");
    if (o.status_code != NULL)
      str(fn, arg, SC_RPC_STATUS_CODE, o.status_code);
  }
  if (s->peer)
    peer_attrs(s, fn, arg);
  if (o.error_type != NULL) /* low cardinality: the error's name, not its message */
    str(fn, arg, SC_ERROR_TYPE, o.error_type);
  if (s->endpoint)
    str(fn, arg, "hoptrace.endpoint", s->endpoint);
  if (s->clock_bound_ns >= 0) {
    num(fn, arg, "hoptrace.clock.shift_ns", s->clock_shift_ns);
    num(fn, arg, "hoptrace.clock.bound_ns", s->clock_bound_ns);
  }
  if (t->incomplete) {
    char why[INCOMPLETE_REASON_MAX];
    str(fn, arg, "hoptrace.incomplete", trace_incomplete_reason(t, why, sizeof(why)));
  }
  char p[96];
  if (span_unfinished(s, p, sizeof(p)) != NULL)
    str(fn, arg, UNFINISHED_KEY, p);
  if (root_sampling_probability(t, s, p, sizeof(p)) != NULL)
    str(fn, arg, SAMPLING_PROBABILITY_KEY, p);
  if (root_sampling_probability_invalid(t, s, p, sizeof(p)) != NULL)
    str(fn, arg, SAMPLING_PROBABILITY_INVALID_KEY, p);
}

void otlp_resource_attrs(const span *s, otlp_attr_fn fn, void *arg) {
  str(fn, arg, "service.name", s->service ? s->service : "unknown");
  /* unique per process of a host: what tells two replicas apart */
  char instance[160];
  snprintf(instance, sizeof(instance), "%s/%d", s->hostname ? s->hostname : "unknown",
           (int)s->vpid);
  if (s->vpid >= 0)
    str(fn, arg, "service.instance.id", instance);
  if (s->hostname)
    str(fn, arg, "host.name", s->hostname);
  if (s->vpid >= 0)
    num(fn, arg, "process.pid", s->vpid);
  if (s->procname)
    str(fn, arg, "process.executable.name", s->procname);
  str(fn, arg, "telemetry.sdk.name", "hoptrace");
  str(fn, arg, "telemetry.sdk.language", "c");
  str(fn, arg, "telemetry.sdk.version", HT_VERSION_STRING);
}

static int same_text(const char *a, const char *b) {
  return strcmp(a ? a : "", b ? b : "") == 0;
}

bool otlp_same_resource(const span *a, const span *b) {
  return a->vpid == b->vpid && same_text(a->service, b->service) &&
         same_text(a->hostname, b->hostname) && same_text(a->procname, b->procname);
}

uint64_t otlp_resource_hash(const span *s) {
  uint64_t h = (uint64_t)(uint32_t)s->vpid * 0x9e3779b97f4a7c15ull;
  const char *parts[] = {s->service, s->hostname, s->procname};
  for (int i = 0; i < 3; i++)
    if (parts[i])
      h = h * 31 + text_hash(parts[i], strlen(parts[i]));
  return h;
}
