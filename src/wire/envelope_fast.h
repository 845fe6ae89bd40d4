/* The canonical-layout decoder: recognises what our encoder (and
 * protobuf-c's pack) writes with a few compares and decodes it without
 * the general decoder's walk. Internal to src/wire/. Must never answer
 * differently from the general decoder (envelope_fast.c says how). */
#ifndef HT_WIRE_ENVELOPE_FAST_H
#define HT_WIRE_ENVELOPE_FAST_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "hoptrace/wire.h"

/* Returned when data is not in the canonical layout (or is anything but
 * a valid envelope): the general decoder must decide, with its errors. */
#define ENVELOPE_NOT_CANONICAL 1

/* 0 with *env filled exactly as the general decoder would fill it,
 * ENVELOPE_NOT_CANONICAL, or HT_ENOMEM (the operation's copy). For the
 * tests: ht_wire_envelope_decode has the same path inlined. */
int ht_wire_envelope_decode_canonical(ht_arena *arena, const uint8_t *data,
                                      size_t len, ht_envelope *env);

#endif
