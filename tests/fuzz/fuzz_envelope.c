/* Fuzz target: envelope decode of arbitrary bytes. Invariants: the
 * production decoder (fast path, then the general one) and the general
 * decoder alone give the same answer, and both agree with protobuf-c's
 * generated unpack (tests/common/envelope_oracle.h); whatever decodes
 * re-encodes, and decoding that again gives the same values. Must never:
 * let a disagreement pass quietly. */
#include <string.h>

#include "envelope_oracle.h"
#include "fuzz_target.h"
#include "wire/arena.h"
#include "wire/envelope_codec.h"

static void check_against_oracle(const uint8_t *data, size_t size) {
  ht_arena a, b;
  ht_arena_init(&a);
  ht_arena_init(&b);
  ht_envelope prod = {0}, general = {0};
  int rp = ht_wire_envelope_decode(&a, data, size, &prod);
  int rg = ht_wire_envelope_decode_general(&b, data, size, &general);
  FUZZ_CHECK(rp == rg);
  FUZZ_CHECK(rp != 0 || envelope_matches(&prod, &general));
  FUZZ_CHECK(oracle_disagrees(data, size, rp, &prod) == NULL);
  FUZZ_CHECK(oracle_disagrees(data, size, rg, &general) == NULL);
  ht_arena_release(&a);
  ht_arena_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static uint8_t frame[1 << 17];
  check_against_oracle(data, size);
  ht_frame_reader *first, *second;
  if (ht_frame_reader_new(0, &first) != 0)
    return 0;
  if (ht_frame_reader_new(0, &second) != 0) {
    ht_frame_reader_free(first);
    return 0;
  }
  ht_envelope env, again;
  if (ht_envelope_decode(first, data, size, &env) == 0) {
    size_t len;
    if (ht_frame_encode(&env, frame, sizeof(frame), &len) == 0) {
      FUZZ_CHECK(len >= HT_FRAME_PREFIX_LEN);
      FUZZ_CHECK(ht_envelope_decode(second, frame + HT_FRAME_PREFIX_LEN,
                                    len - HT_FRAME_PREFIX_LEN, &again) == 0);
      FUZZ_CHECK(envelope_matches(&env, &again));
    }
  }
  ht_frame_reader_free(first);
  ht_frame_reader_free(second);
  return 0;
}
