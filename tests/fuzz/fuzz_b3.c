/* Fuzz target: B3 single-header parser. Invariant: what parses with ids
 * formats and parses back to the same context and sampling state. */
#include <string.h>

#include "fuzz_target.h"
#include "hoptrace/context.h"
#include "hoptrace/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ht_trace_context ctx, again;
  ht_b3_sampling sampling, sampling_again;
  if (ht_b3_parse((const char *)data, size, &ctx, &sampling) != 0)
    return 0;
  if (ht_context_validate(&ctx) != 0) {
    FUZZ_CHECK(size == 1); /* only a lone sampling state has no ids */
    return 0;
  }
  char text[HT_B3_MAX_LEN + 1];
  size_t len;
  FUZZ_CHECK(ht_b3_format(&ctx, sampling, text, sizeof(text), &len) == 0);
  FUZZ_CHECK(len <= size && strlen(text) == len);
  FUZZ_CHECK(ht_b3_parse(text, len, &again, &sampling_again) == 0);
  FUZZ_CHECK(sampling_again == sampling);
  FUZZ_CHECK(ht_context_equal(&ctx, &again));
  return 0;
}
