/* Wire-format check of an Envelope before protobuf-c sees it: classifies
 * what is wrong (truncation, bad varint, wrong wire type, too many unknown
 * fields) and finds the payload so the decoder can hand it out in place.
 * Internal to src/wire/. */
#ifndef HT_WIRE_ENVELOPE_SCAN_H
#define HT_WIRE_ENVELOPE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct envelope_scan {
  bool has_version;
  uint64_t version;
  size_t payload_fields;  /* occurrences of the payload field */
  size_t payload_tag_at;  /* offset of the last payload field's tag */
  size_t payload_at;      /* offset of its bytes */
  size_t payload_len;
  bool payload_is_last;   /* nothing follows the last payload field */
} envelope_scan;

/* 0 or HT_ETRUNCATED, HT_EVARINT, HT_EWIRETYPE, HT_EMALFORMED. */
int envelope_scan_run(const uint8_t *data, size_t len, envelope_scan *out);

#endif
