/* The only bridge between protobuf-c's generated structs and ht_envelope.
 * Internal to src/wire/. */
#ifndef HT_WIRE_ENVELOPE_CODEC_H
#define HT_WIRE_ENVELOPE_CODEC_H

#include "arena.h"
#include "hoptrace/wire.h"

/* Decodes data[0..len) into *env; allocations come from arena, and the
 * payload may point into data. Errors as ht_frame_reader_feed. */
int ht_wire_envelope_decode(ht_arena *arena, const uint8_t *data, size_t len,
                            ht_envelope *env);

/* The same without the canonical fast path (for tests comparing the
 * two). */
int ht_wire_envelope_decode_general(ht_arena *arena, const uint8_t *data,
                                    size_t len, ht_envelope *env);

#endif
