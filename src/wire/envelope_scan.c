/* Walks protobuf wire format for Envelope and its TraceContext. Reads
 * only: must never allocate, and must stay in step with hoptrace.proto. */
#include "envelope_scan.h"

#include "hoptrace/error.h"
#include "hoptrace/wire.h"

enum wire_type {
  WT_VARINT = 0,
  WT_FIXED64 = 1,
  WT_LEN = 2,
  WT_FIXED32 = 5,
  WT_ANY = -1 /* unknown field: any non-group type */
};

/* Expected wire type of a known field, WT_ANY when unknown. */
static int envelope_field_type(uint64_t field) {
  switch (field) {
  case 1: case 2: case 3: case 5: return WT_VARINT;
  case 4: case 6: case 15: return WT_LEN;
  default: return WT_ANY;
  }
}

static int trace_field_type(uint64_t field) {
  switch (field) {
  case 1: case 2: case 3: case 4: return WT_FIXED64;
  case 5: return WT_VARINT;
  default: return WT_ANY;
  }
}

typedef struct cursor {
  const uint8_t *start;
  const uint8_t *p;
  const uint8_t *end;
  size_t unknown_fields;
} cursor;

static int read_varint(cursor *c, uint64_t *value) {
  uint64_t v = 0;
  for (unsigned i = 0; i < 10; i++) {
    if (c->p == c->end)
      return HT_ETRUNCATED;
    uint8_t byte = *c->p++;
    if (i == 9 && byte > 1)
      return HT_EVARINT; /* more than 64 bits */
    v |= (uint64_t)(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      *value = v;
      return 0;
    }
  }
  return HT_EVARINT;
}

static int skip(cursor *c, uint64_t n) {
  if ((uint64_t)(c->end - c->p) < n)
    return HT_ETRUNCATED;
  c->p += n;
  return 0;
}

typedef int (*field_type_fn)(uint64_t field);

/* Reads one field's tag and checks its wire type. */
static int read_tag(cursor *c, field_type_fn type_of, uint64_t *field,
                    int *wire_type) {
  uint64_t tag;
  int rc = read_varint(c, &tag);
  if (rc != 0)
    return rc;
  *field = tag >> 3;
  *wire_type = (int)(tag & 7);
  if (*field == 0 || *field > 0x1fffffffu)
    return HT_EMALFORMED;
  int expected = type_of(*field);
  if (expected == WT_ANY) {
    if (*wire_type != WT_VARINT && *wire_type != WT_FIXED64 &&
        *wire_type != WT_LEN && *wire_type != WT_FIXED32)
      return HT_EWIRETYPE; /* groups (3, 4) and 6, 7 */
    if (++c->unknown_fields > HT_ENVELOPE_MAX_UNKNOWN_FIELDS)
      return HT_EMALFORMED;
  } else if (*wire_type != expected) {
    return HT_EWIRETYPE;
  }
  return 0;
}

static uint64_t load_le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

/* Reads a field's value (fixed64 too); for WT_LEN sets *value to the
 * length and leaves p at the bytes. */
static int read_value(cursor *c, int wire_type, uint64_t *value) {
  switch (wire_type) {
  case WT_VARINT:
    return read_varint(c, value);
  case WT_FIXED64:
    if (c->end - c->p < 8)
      return HT_ETRUNCATED;
    *value = load_le64(c->p);
    c->p += 8;
    return 0;
  case WT_FIXED32:
    *value = 0;
    return skip(c, 4);
  default: /* WT_LEN */
    return read_varint(c, value);
  }
}

/* Keeps the values as protobuf would: the last occurrence of a scalar
 * wins, and a repeated submessage merges into the earlier one. */
static void keep_trace_value(envelope_scan *out, uint64_t field, uint64_t value) {
  switch (field) {
  case 1: out->trace_hi = value; break;
  case 2: out->trace_lo = value; break;
  case 3: out->span_id = value; break;
  case 4: out->parent_span_id = value; break;
  case 5: out->trace_flags = (uint32_t)value; break;
  default: break; /* unknown: skipped */
  }
}

static int scan_trace_context(cursor *outer, uint64_t len, envelope_scan *out) {
  if ((uint64_t)(outer->end - outer->p) < len)
    return HT_ETRUNCATED;
  cursor c = {outer->start, outer->p, outer->p + len, outer->unknown_fields};
  while (c.p < c.end) {
    uint64_t field, value;
    int wire_type;
    int rc = read_tag(&c, trace_field_type, &field, &wire_type);
    if (rc == 0)
      rc = read_value(&c, wire_type, &value);
    if (rc == 0 && wire_type == WT_LEN)
      rc = skip(&c, value);
    if (rc != 0)
      return rc;
    if (wire_type != WT_LEN)
      keep_trace_value(out, field, value);
  }
  outer->unknown_fields = c.unknown_fields;
  outer->p = c.end;
  return 0;
}

static int scan_field(cursor *c, envelope_scan *out) {
  uint64_t field, value;
  int wire_type;
  size_t tag_at = (size_t)(c->p - c->start);
  int rc = read_tag(c, envelope_field_type, &field, &wire_type);
  if (rc == 0)
    rc = read_value(c, wire_type, &value);
  if (rc != 0)
    return rc;
  if (wire_type != WT_LEN) {
    if (field == 1) {
      out->has_version = true;
      out->version = value;
    }
    return 0;
  }
  if (field == 6) {
    int rc6 = scan_trace_context(c, value, out);
    out->trace_fields++;
    out->trace_tag_at = tag_at;
    out->trace_end = (size_t)(c->p - c->start);
    return rc6;
  }
  if (field == 15) {
    out->payload_fields++;
    out->payload_tag_at = tag_at;
    out->payload_at = (size_t)(c->p - c->start);
    out->payload_len = (size_t)value;
  }
  return skip(c, value);
}

int ht_wire_envelope_scan_run(const uint8_t *data, size_t len,
                              envelope_scan *out) {
  *out = (envelope_scan){0};
  cursor c = {data, data, data + len, 0};
  while (c.p < c.end) {
    int rc = scan_field(&c, out);
    if (rc != 0)
      return rc;
  }
  out->payload_is_last =
      out->payload_fields > 0 && out->payload_at + out->payload_len == len;
  return 0;
}
