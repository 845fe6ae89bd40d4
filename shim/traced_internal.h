/* Internal glue of the traced messenger (shim/): the calling thread's
 * current context and pending sampling hint, the message counters, the
 * factory the flavour switch calls, and the process-wide control socket
 * opened from HT_CONTROL_SOCKET. Internal to libhoptrace. */
#ifndef HT_SHIM_TRACED_INTERNAL_H
#define HT_SHIM_TRACED_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hoptrace/context.h"
#include "hoptrace/messenger.h"
#include "hoptrace/sampler.h"

/* --- dispatch_context.c: per-thread state */

/* The thread's current context; false when there is none. */
bool ht_shim_current(ht_trace_context *out);
/* Sets (ctx valid) or clears (ctx NULL) the current context. */
void ht_shim_set_current(const ht_trace_context *ctx);
/* Takes the pending per-message hint (and resets it to DEFAULT). */
ht_sample_hint ht_shim_take_hint(void);

/* Message counters (process-wide). */
void ht_shim_count_send(size_t bytes, bool sampled);
/* Received frames are counted on arrival; the ones recorded once the
 * receiving span's decision is known. */
void ht_shim_count_recv(size_t bytes);
void ht_shim_count_recv_sampled(void);
void ht_shim_count_failed(void);

/* --- traced_messenger.c: the flavour factory (src/transport/options.c) */
int ht_shim_traced_messenger_new(ht_messenger **out,
                                 const ht_messenger_options *opts);

/* --- control_env.c: HT_CONTROL_SOCKET, shared by traced messengers */
/* Opens the socket named by HT_CONTROL_SOCKET on the first call (if
 * set), counts a user. Never fails the messenger: a socket that cannot
 * be opened is reported on stderr. */
void ht_shim_control_env_acquire(void);
/* Drops a user; the last one closes the socket. */
void ht_shim_control_env_release(void);

#endif /* HT_SHIM_TRACED_INTERNAL_H */
