/* The traced messenger's factory, called by the composition root
 * (shim/messenger_new.c). Internal to libhoptrace. */
#ifndef HT_SHIM_TRACED_INTERNAL_H
#define HT_SHIM_TRACED_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "hoptrace/messenger.h"
#include "hoptrace/span.h"
#include "hoptrace/traced.h"

/* A messenger with the traced hook table; errors as ht_messenger_new.
 * on_destroy (may be NULL) runs once when it is destroyed, or before
 * this returns an error: what the caller took for its lifetime. */
int ht_shim_traced_messenger_new(ht_messenger **out,
                                 const ht_messenger_options *opts,
                                 void (*on_destroy)(void));

/* The key-values the application added to a server span (traced_kv.c
 * fills it, traced_hooks.c writes it with the span). */
typedef struct ts_kvs {
  unsigned char count; /* how many, the first integer one among them */
  int64_t value;       /* the first integer one, written inline with the
                        * span's event ... */
  char key[HT_KV_KEY_MAX + 1]; /* ... its key, copied ("": none): a copy
                        * costs less than a recorder reference's lookup
                        * and compare (about 55 instructions) */
} ts_kvs;

/* Records the key-values ht_next_call_* kept on the calling thread onto
 * span (the sampled client span of the call they were for) and forgets
 * them. traced_kv.c. */
void ht_shim_next_call_record(const ht_span *span);

#endif /* HT_SHIM_TRACED_INTERNAL_H */
