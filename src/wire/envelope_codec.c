/* Envelope decoding: the canonical fast path first, else the general
 * decoder (envelope_general.c); ht_wire_envelope_decode is in
 * envelope_fast.c, where the fast path inlines into it. Encoding is in
 * envelope_encode.c. Must never: hand out a view the arena or the input
 * does not hold, decode differently from protobuf-c's unpack.
 *
 * Why two decoders and not protobuf-c's unpack as the general one: the
 * error classes of hoptrace/wire.h (HT_ETRUNCATED, HT_EVARINT,
 * HT_EWIRETYPE, HT_EVERSION even when the rest cannot be parsed, the
 * unknown-field bound) need a walk of the wire format that protobuf-c
 * does not expose (it answers NULL), and its unpack copies the payload
 * and every unknown field into the arena. The walk we needed anyway
 * became the whole general decoder, with no copy but the operation's: a
 * non-canonical frame decodes in less than half the instructions
 * (bench/results/wire.txt, "gen" rows) and the library no longer calls
 * protobuf-c. protobuf-c's generated unpack stays as the oracle of
 * tests/wire and tests/fuzz/fuzz_envelope.c, which compare both decoders
 * against it: same accept/reject, same values. */
#include "hoptrace/wire.h"

const char *ht_msg_type_name(ht_msg_type type) {
  switch (type) {
  case HT_MSG_REQUEST: return "request";
  case HT_MSG_REPLY: return "reply";
  case HT_MSG_ONEWAY: return "one-way";
  case HT_MSG_ERROR: return "error";
  default: return "unknown";
  }
}
