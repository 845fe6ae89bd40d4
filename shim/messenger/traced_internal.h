/* The traced messenger's factory, called by the composition root
 * (shim/messenger_new.c). Internal to libhoptrace. */
#ifndef HT_SHIM_TRACED_INTERNAL_H
#define HT_SHIM_TRACED_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "hoptrace/messenger.h"
#include "hoptrace/span.h"

/* A messenger with the traced hook table; errors as ht_messenger_new.
 * on_destroy (may be NULL) runs once when it is destroyed, or before
 * this returns an error: what the caller took for its lifetime. */
int ht_shim_traced_messenger_new(ht_messenger **out,
                                 const ht_messenger_options *opts,
                                 void (*on_destroy)(void));

/* The sampled server span of an open request of a traced messenger and
 * the count of key-values added to it (*count), or NULL (unsampled, or
 * not a traced messenger's request). traced_messenger.c. */
ht_span *ht_shim_request_span(const ht_request *req, unsigned char **count);

/* Keeps key = value (a valid key of key_len bytes) as the integer
 * key-value written in the span's own event, span being what
 * ht_shim_request_span returned, when it has none yet: 1, else 0 (record
 * it apart). traced_messenger.c. */
int ht_shim_span_kv_inline(ht_span *span, const char *key, size_t key_len,
                           int64_t value);

/* Records the key-values ht_next_call_* kept on the calling thread onto
 * span (the sampled client span of the call they were for) and forgets
 * them. traced_kv.c. */
void ht_shim_next_call_record(const ht_span *span);

#endif /* HT_SHIM_TRACED_INTERNAL_H */
