/* Trace and span id generation.
 *
 * Ids come from a per-thread generator (xoshiro256**) seeded from the
 * kernel (getrandom). After fork() the child reseeds before its next id,
 * so it never repeats the parent's sequence. Ids are never zero. No lock,
 * no allocation, no I/O on the hot path; safe to call from any thread.
 * These ids are unique, not secret: do not use them as keys or tokens.
 */
#ifndef HOPTRACE_IDS_H
#define HOPTRACE_IDS_H

#include <stdint.h>

#include "hoptrace/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A new non-zero 64-bit span id. */
HT_API uint64_t ht_id_span(void);

/* A new 128-bit trace id: *lo is never zero (so the id is valid even for
 * peers that keep only the low 64 bits); *hi is random. Both pointers
 * must be valid. */
HT_API void ht_id_trace(uint64_t *hi, uint64_t *lo);

#ifdef __cplusplus
}
#endif

#endif /* HOPTRACE_IDS_H */
