/* The envelope decoders: the canonical fast path with the general one
 * behind it, and the general one alone. Internal to src/wire/.
 * Must never: be reached from outside the library but by tests. */
#ifndef HT_WIRE_ENVELOPE_CODEC_H
#define HT_WIRE_ENVELOPE_CODEC_H

#include "arena.h"
#include "hoptrace/wire.h"

/* Decodes data[0..len) into *env; allocations come from arena, and the
 * payload may point into data. Errors as ht_frame_reader_feed. */
int ht_wire_envelope_decode(ht_arena *arena, const uint8_t *data, size_t len,
                            ht_envelope *env);

/* The general decoder alone (envelope_general.c): any valid encoding;
 * what ht_wire_envelope_decode falls back to, and what tests compare the
 * fast path with. */
int ht_wire_envelope_decode_general(ht_arena *arena, const uint8_t *data,
                                    size_t len, ht_envelope *env);

#endif
