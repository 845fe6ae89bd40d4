/* Fuzz target: a collector's 2xx reply body, read for its partial success
 * (tools/hoptrace/ship/partial.c): bytes from the network. Input: a byte
 * choosing the format (protobuf, JSON, Zipkin), two bytes the batch's
 * span count, then the body. Never crashes, never reads outside the body
 * (it is copied to a buffer of its exact size), and what it keeps holds
 * partial.h's promises: the count between 0 and the batch, taken as the
 * collector wrote it unless flagged impossible, the message bounded,
 * valid UTF-8, with no control byte. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "output/utf8.h"
#include "ship/partial.h"

/* valid UTF-8, no C0, DEL or C1 control */
static void check_message(const partial_success *p) {
  const unsigned char *m = (const unsigned char *)p->message;
  size_t len = strnlen(p->message, sizeof(p->message));
  FUZZ_CHECK(len < sizeof(p->message));
  FUZZ_CHECK(len <= PARTIAL_MESSAGE_MAX + 3);
  FUZZ_CHECK(!p->cut || (len >= 3 && memcmp(m + len - 3, "...", 3) == 0));
  for (size_t i = 0; i < len;) {
    if (m[i] < 0x80) {
      FUZZ_CHECK(m[i] >= 0x20 && m[i] != 0x7f);
      i++;
      continue;
    }
    size_t seq = utf8_sequence(m + i);
    FUZZ_CHECK(seq > 0 && seq <= len - i);
    FUZZ_CHECK(!(m[i] == 0xc2 && m[i + 1] < 0xa0));
    i += seq;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3)
    return 0;
  ship_format format = data[0] % 3 == 0 ? SHIP_OTLP_PROTO
                       : data[0] % 3 == 1 ? SHIP_OTLP_JSON
                                          : SHIP_ZIPKIN;
  size_t spans = (size_t)data[1] << 8 | data[2];
  size_t len = size - 3;
  uint8_t *body = malloc(len ? len : 1);
  if (body == NULL)
    return 0;
  memcpy(body, data + 3, len);
  partial_success p;
  partial_success_parse(format, len ? body : NULL, len, spans, &p);
  free(body);

  FUZZ_CHECK(p.rejected <= spans);
  if (!p.impossible)
    FUZZ_CHECK(p.reported >= 0 && (uint64_t)p.reported == p.rejected);
  else
    FUZZ_CHECK(p.reported < 0 ? p.rejected == 0 : p.rejected == 0 || p.rejected == spans);
  FUZZ_CHECK(!p.unreadable || format == SHIP_OTLP_PROTO);
  if (p.unreadable || format == SHIP_ZIPKIN)
    FUZZ_CHECK(p.rejected == 0 && !p.impossible && p.message[0] == '\0');
  check_message(&p);
  return 0;
}
