/* Fuzz target: traceparent parser. Invariant: what parses formats to a
 * valid version-00 header that parses to the same context. */
#include <string.h>

#include "fuzz_target.h"
#include "hoptrace/context.h"
#include "hoptrace/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ht_trace_context ctx, again;
  if (ht_traceparent_parse((const char *)data, size, &ctx) != 0)
    return 0;
  FUZZ_CHECK(ht_context_validate(&ctx) == 0);
  char text[HT_TRACEPARENT_LEN + 1];
  FUZZ_CHECK(ht_traceparent_format(&ctx, text, sizeof(text)) == 0);
  FUZZ_CHECK(strlen(text) == HT_TRACEPARENT_LEN);
  FUZZ_CHECK(ht_traceparent_parse(text, HT_TRACEPARENT_LEN, &again) == 0);
  FUZZ_CHECK(ht_context_equal(&ctx, &again));
  /* a canonical version-00 header formats back byte for byte */
  if (size == HT_TRACEPARENT_LEN && data[0] == '0' && data[1] == '0' &&
      data[53] == '0' && data[54] >= '0' && data[54] <= '3') /* sampled, random */
    FUZZ_CHECK(memcmp(text, data, size) == 0);
  return 0;
}
