/* The traced messenger's state and the slot a span is held in between
 * two hooks, shared by its four files: traced_hooks.c (the hooks: the
 * span sides, client and server), traced_spread.c (a capture spread to
 * the other processes of its trace), traced_messenger.c (set-up and
 * tear-down of the state) and traced_kv.c (a request's slot as the
 * application reaches it). Internal to libhoptrace. */
#ifndef HT_SHIM_TRACED_STATE_H
#define HT_SHIM_TRACED_STATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hoptrace/messenger.h"
#include "hoptrace/span.h"
#include "hoptrace/traced.h"
#include "common/spin.h"
#include "messenger/traced_crumbs.h"
#include "messenger/traced_internal.h"
#include "transport/hooks.h"

typedef struct ts_state ts_state;

/* A span the shim holds between two hooks (client call, server request
 * or one-way). Sampled ones, the only ones a slot is filled for, are in
 * the messenger's live list from their fill to their release, so that
 * close records what was never finished. */
typedef struct ts_slot {
  ht_span span;
  bool owned;          /* malloc'd here (client); else transport storage */
  bool sent;           /* client: its frame went out */
  bool oneway;         /* client: a one-way's (recorded when it goes out) */
  ht_span_kind kind;
  uint64_t start_ns;   /* "cs" (or settling, if never sent) / "sr" */
  const void *desc;    /* the span's names (ht_span_desc_ref) ... */
  char *name;          /* ... or, when none could be kept, a copy */
  const void *peer;    /* ht_span_peer_ref of the connection, or NULL */
  /* server: its reply is to carry HT_FLAG_CAPTURE. Set under the lock by
   * whichever thread spread a capture, read by the one that answers
   * (h_before_reply), which alone writes the span's context. */
  atomic_bool capture;
  ts_kvs kv;           /* what the application added (traced_kv.c) */
  ts_state *st;
  struct ts_slot *prev, *next;
} ts_slot;

/* Client slots kept for reuse (beyond that, freed): a malloc and free
 * per request cost more than the rest of the slot's life. */
#define TS_SPARES_MAX 64u

struct ts_state {
  _Atomic(ht_messenger *) m; /* ours (set once built): notices go through it */
  ts_crumbs *crumbs; /* the flight recorder's breadcrumbs */
  char *service;
  uint64_t serial; /* names it among the process's messengers */
  ht_spin lock; /* the live list and the spares */
  ts_slot live; /* sentinel of the live list */
  ts_slot *spares; /* linked by next */
  unsigned n_spares;
  void (*on_destroy)(void); /* the creator's, run once at destroy */
};
/* The hook table of every traced messenger (traced_hooks.c). */
extern const ht_transport_hooks ht_shim_traced_hooks;

/* Frees st (its crumbs and service too; each may be NULL), then runs the
 * creator's on_destroy: the state's last sight, at destroy or when the
 * messenger could not be made (traced_messenger.c). */
void ht_shim_traced_state_free(ts_state *st);

/* A trigger fired here for ctx's trace: notices to the peers called for
 * it, the flag on its open server spans' replies (traced_spread.c). */
void ht_shim_captured_here(ts_state *st, const ht_trace_context *ctx);

/* Another process captured ctx's trace and told us, hops away: a notice
 * (known_only: honoured only for a trace we took part in) or a reply's
 * flag (traced_spread.c). */
void ht_shim_captured_there(ts_state *st, const ht_trace_context *ctx, unsigned hops,
                            bool known_only);

/* The on_notice hook (hooks.h): a capture notice from a caller. */
void ht_shim_on_notice(void *arg, const ht_envelope *env, const ht_hook_origin *from);

#endif /* HT_SHIM_TRACED_STATE_H */
