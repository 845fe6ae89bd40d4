/* The names of the traced messenger's spans as recorder references
 * (span_path.h: ht_span_desc_ref, ht_span_peer_ref), remembered per
 * thread (traced_names.c): a messenger names its spans with a handful of
 * operations and peers, and a hit costs a strlen and a compare (about 60
 * instructions) where a lookup through the recorder's intern tables
 * costs four calls, a hash and three compares (about 450).
 * Internal to libhoptrace; loop or caller thread, no lock. Each returns
 * NULL when the span is not written or the name cannot be interned. */
#ifndef HT_SHIM_TRACED_NAMES_H
#define HT_SHIM_TRACED_NAMES_H

#include <stdint.h>

#include "hoptrace/span.h"
#include "transport/hooks.h"

/* As ht_span_desc_ref(span, info), info naming a span of messenger
 * `owner` (a number no other messenger of the process has: its service
 * name is fixed for its life). */
const void *ht_shim_desc_ref(const ht_span *span, uint64_t owner,
                             const ht_span_info *info);

/* As ht_span_peer_ref(span, peer). */
const void *ht_shim_peer_ref(const ht_span *span, const char *peer);

/* A sampled client or producer span's names at once, *desc as
 * ht_shim_desc_ref(span, owner, info) and *peer_ref as
 * ht_shim_peer_ref(span, to->url) (info->name not NULL): a call names the
 * same operation at the same address to the same peer time after time,
 * which a memo of both finds for one compare of text (the peer by its
 * serial: hooks.h ht_hook_peer). */
void ht_shim_client_refs(const ht_span *span, uint64_t owner,
                         const ht_span_info *info, const ht_hook_peer *to,
                         const void **desc, const void **peer_ref);

/* An incoming message's names, kept with its handler and connection
 * (state the hooks allocate in handler_init and conn_init, hooks.h; loop
 * thread only): a load and a compare, where even a memo hit above costs a
 * strlen and a compare. Words: the recorder, then the reference(s). */
typedef struct ts_words {
  const void *word[3];
} ts_words;

/* As ht_shim_desc_ref for a sampled span, info naming a server or
 * consumer span of the handler whose words `memo` are (NULL: none of its
 * own, the default handler's, or no memory for them). */
const void *ht_shim_handler_desc_ref(const ht_span *span, uint64_t owner,
                                     const ht_span_info *info,
                                     ts_words *memo);

/* As ht_shim_peer_ref for a sampled span, of the connection a message
 * came on (its words: from->conn, NULL when there was no memory). */
const void *ht_shim_conn_peer_ref(const ht_span *span,
                                  const ht_hook_origin *from);

/* Both of a sampled server or consumer span's names: *desc as
 * ht_shim_handler_desc_ref(span, owner, info, from->handler), *peer_ref
 * as ht_shim_conn_peer_ref(span, from); one call where both are kept. */
void ht_shim_server_refs(const ht_span *span, uint64_t owner,
                         const ht_span_info *info, const ht_hook_origin *from,
                         const void **desc, const void **peer_ref);

#endif /* HT_SHIM_TRACED_NAMES_H */
