/* The traced messenger's set-up and tear-down: its state made (service
 * name, breadcrumbs, serial, the live list) and handed with the hook
 * table (traced_hooks.c) to the transport, and freed at destroy; and an
 * open request's context from outside the hooks (ht_request_context;
 * its sampled server span for the application's key-values: traced_kv.c).
 *
 * Must never: leave on_destroy unrun, whether the messenger is made or
 * not (traced_internal.h).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hoptrace/error.h"
#include "hoptrace/span.h"
#include "hoptrace/tracing.h"
#include "hoptrace/traced.h"
#include "messenger/traced_capture.h"
#include "messenger/traced_crumbs.h"
#include "messenger/traced_internal.h"
#include "messenger/traced_state.h"
#include "transport/hooks.h"

void ht_shim_traced_state_free(ts_state *st) {
  ht_shim_crumbs_free(st->crumbs);
  void (*on_destroy)(void) = st->on_destroy;
  free(st->service);
  free(st);
  if (on_destroy != NULL)
    on_destroy();
}

int ht_shim_traced_messenger_new(ht_messenger **out,
                                 const ht_messenger_options *opts,
                                 void (*on_destroy)(void)) {
  ht_tracing_init();
  ht_shim_capture_env();
  ts_state *st = calloc(1, sizeof(*st));
  if (st == NULL) {
    if (on_destroy != NULL)
      on_destroy();
    return HT_ENOMEM;
  }
  st->on_destroy = on_destroy;
  const char *name = NULL;
  if (opts != NULL &&
      opts->size >= offsetof(ht_messenger_options, name) + sizeof(opts->name))
    name = opts->name;
  st->service = strdup(name != NULL ? name : "hoptrace");
  st->crumbs = ht_shim_crumbs_new();
  if (st->service == NULL || st->crumbs == NULL) {
    ht_shim_traced_state_free(st);
    return HT_ENOMEM;
  }
  static atomic_uint_fast64_t serials;
  st->serial = atomic_fetch_add_explicit(&serials, 1, memory_order_relaxed) + 1;
  st->live.next = st->live.prev = &st->live;
  atomic_init(&st->lock.held, false);
  int rc = ht_transport_messenger_new(out, opts, &ht_shim_traced_hooks, st);
  if (rc == 0)
    atomic_store_explicit(&st->m, *out, memory_order_release); /* before any peer */
  return rc;
}

int ht_request_context(const ht_request *req, ht_trace_context *out) {
  if (req == NULL || out == NULL)
    return HT_EINVAL;
  /* the server span's context, sampled or not (an unsampled request keeps
   * no slot, but its reply carries the span all the same) */
  const ht_trace_context *ctx = ht_transport_request_trace(req);
  if (ctx == NULL)
    return HT_ENOENT;
  *out = *ctx;
  return 0;
}