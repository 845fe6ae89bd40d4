/* Fuzz target: envelope decode of arbitrary bytes. Invariant: whatever
 * decodes re-encodes, and decoding that again gives the same values. */
#include <string.h>

#include "fuzz_target.h"
#include "hoptrace/error.h"
#include "hoptrace/wire.h"

static int same(const ht_envelope *a, const ht_envelope *b) {
  return a->version == b->version && a->type == b->type &&
         a->sequence == b->sequence && a->status == b->status &&
         strcmp(a->operation, b->operation) == 0 &&
         a->has_trace == b->has_trace &&
         (!a->has_trace || ht_context_equal(&a->trace, &b->trace)) &&
         a->payload_len == b->payload_len &&
         (a->payload_len == 0 ||
          memcmp(a->payload, b->payload, a->payload_len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static uint8_t frame[1 << 17];
  ht_frame_reader *first, *second;
  if (ht_frame_reader_new(&first, 0) != 0)
    return 0;
  if (ht_frame_reader_new(&second, 0) != 0) {
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
      FUZZ_CHECK(same(&env, &again));
    }
  }
  ht_frame_reader_free(first);
  ht_frame_reader_free(second);
  return 0;
}
