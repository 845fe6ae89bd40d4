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
  /* The trace context, read here so protobuf-c need not parse it. */
  size_t trace_fields;    /* occurrences of the trace field */
  size_t trace_tag_at;    /* offset of the last one's tag */
  size_t trace_end;       /* offset just past it */
  uint64_t trace_hi, trace_lo, span_id, parent_span_id;
  uint32_t trace_flags;
  bool has_version;
  uint64_t version;
  size_t payload_fields;  /* occurrences of the payload field */
  size_t payload_tag_at;  /* offset of the last payload field's tag */
  size_t payload_at;      /* offset of its bytes */
  size_t payload_len;
  bool payload_is_last;   /* nothing follows the last payload field */
} envelope_scan;

/* 0 or HT_ETRUNCATED, HT_EVARINT, HT_EWIRETYPE, HT_EMALFORMED. */
int ht_wire_envelope_scan_run(const uint8_t *data, size_t len,
                              envelope_scan *out);

#endif
