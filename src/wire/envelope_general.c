/* The general envelope decoder: any protobuf encoding of Envelope and
 * its TraceContext (hoptrace.proto) decoded with protobuf-c's unpack
 * semantics, and the error classes of hoptrace/wire.h. The last
 * occurrence of a scalar wins; a repeated trace context merges as
 * protobuf-c merges it, which for proto3 scalars (no presence) keeps
 * nothing of the earlier one; unknown fields are skipped (at most
 * HT_ENVELOPE_MAX_UNKNOWN_FIELDS); the payload is handed out in place.
 * Must never: accept bytes protobuf-c's unpack refuses (tests and
 * tests/fuzz/fuzz_envelope.c compare the two), allocate anything but the
 * operation's copy, drift from hoptrace.proto. */
#include <string.h>

#include "envelope_codec.h"
#include "hoptrace/error.h"
#include "wire_bytes.h"

enum wire_type { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2, WT_FIXED32 = 5 };

/* protobuf-c reads tags and length prefixes of at most 5 bytes. */
#define PB_MAX_PREFIX_BYTES 5u

typedef struct cursor {
  const uint8_t *p;
  const uint8_t *end;
  size_t unknown_fields;
} cursor;

/* What the walk found; turned into an ht_envelope by the caller. */
typedef struct fields {
  bool has_version;
  uint64_t version; /* all 64 bits: a newer version wins over a parse error */
  uint64_t type, sequence, status;
  const uint8_t *operation, *payload;
  size_t operation_len, payload_len;
  bool has_trace;
  ht_trace_context trace;
} fields;

static inline int read_varint(cursor *c, uint64_t *value, unsigned *bytes) {
  if (c->p < c->end && *c->p < 0x80) { /* tags, lengths, small values */
    *value = *c->p++;
    *bytes = 1;
    return 0;
  }
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
      *bytes = i + 1;
      return 0;
    }
  }
  return HT_EVARINT;
}

/* A tag: protobuf-c refuses one longer than 5 bytes (a length prefix
 * too, checked in read_field after truncation, the class it had). */
static int read_tag(cursor *c, uint64_t *value) {
  unsigned bytes;
  int rc = read_varint(c, value, &bytes);
  if (rc == 0 && bytes > PB_MAX_PREFIX_BYTES)
    return HT_EMALFORMED;
  return rc;
}

/* The expected wire type of a known field, -1 for an unknown one. */
static int envelope_wire_type(uint64_t field) {
  switch (field) {
  case 1: case 2: case 3: case 5: return WT_VARINT;
  case 4: case 6: case 15: return WT_LEN;
  default: return -1;
  }
}

static int trace_wire_type(uint64_t field) {
  switch (field) {
  case 1: case 2: case 3: case 4: return WT_FIXED64;
  case 5: return WT_VARINT;
  default: return -1;
  }
}

/* Reads one field: its number and value; a length-delimited value is
 * passed over, *value its length, the bytes just before c->p (a fixed32
 * one's value is 0: no known field has that type). Both outputs are set
 * on every path, errors included: the callers' switch reads them. */
static int read_field(cursor *c, int (*wire_type_of)(uint64_t),
                      uint64_t *field, uint64_t *value) {
  *field = 0;
  *value = 0;
  uint64_t tag;
  int rc = read_tag(c, &tag);
  if (rc != 0)
    return rc;
  *field = tag >> 3;
  int wire_type = (int)(tag & 7);
  if (*field == 0 || *field > 0x1fffffffu)
    return HT_EMALFORMED;
  int expected = wire_type_of(*field);
  if (expected < 0) {
    if (wire_type != WT_VARINT && wire_type != WT_FIXED64 &&
        wire_type != WT_LEN && wire_type != WT_FIXED32)
      return HT_EWIRETYPE; /* groups (3, 4) and 6, 7 */
    if (++c->unknown_fields > HT_ENVELOPE_MAX_UNKNOWN_FIELDS)
      return HT_EMALFORMED;
  } else if (wire_type != expected) {
    return HT_EWIRETYPE;
  }
  unsigned bytes;
  size_t n = 0;
  switch (wire_type) {
  case WT_VARINT:
    return read_varint(c, value, &bytes);
  case WT_FIXED64:
    n = 8;
    break;
  case WT_FIXED32:
    n = 4;
    break;
  default: /* WT_LEN: a length past the input is truncation first */
    rc = read_varint(c, value, &bytes);
    if (rc != 0)
      return rc;
    if (*value > (uint64_t)(c->end - c->p))
      return HT_ETRUNCATED;
    if (bytes > PB_MAX_PREFIX_BYTES)
      return HT_EMALFORMED;
    n = (size_t)*value;
    break;
  }
  if ((size_t)(c->end - c->p) < n)
    return HT_ETRUNCATED;
  if (wire_type == WT_FIXED64)
    *value = wire_load_le64(c->p);
  c->p += n;
  return 0;
}

/* The trace context in the len bytes before c->p. */
static int walk_trace(cursor *c, size_t len, ht_trace_context *t) {
  cursor in = {c->p - len, c->p, c->unknown_fields};
  *t = (ht_trace_context){0}; /* an earlier occurrence is replaced */
  while (in.p < in.end) {
    uint64_t field, value;
    int rc = read_field(&in, trace_wire_type, &field, &value);
    if (rc != 0)
      return rc;
    switch (field) {
    case 1: t->trace_id_hi = value; break;
    case 2: t->trace_id_lo = value; break;
    case 3: t->span_id = value; break;
    case 4: t->parent_span_id = value; break;
    case 5: t->flags = (uint32_t)value; break;
    default: break; /* unknown: skipped */
    }
  }
  c->unknown_fields = in.unknown_fields;
  return 0;
}

static int walk_envelope(const uint8_t *data, size_t len, fields *f) {
  cursor c = {data, data + len, 0};
  while (c.p < c.end) {
    uint64_t field, value;
    int rc = read_field(&c, envelope_wire_type, &field, &value);
    if (rc != 0)
      return rc;
    switch (field) {
    case 1: f->has_version = true, f->version = value; break;
    case 2: f->type = value; break;
    case 3: f->sequence = value; break;
    case 4: f->operation = c.p - value, f->operation_len = (size_t)value; break;
    case 5: f->status = value; break;
    case 6:
      f->has_trace = true;
      rc = walk_trace(&c, (size_t)value, &f->trace);
      if (rc != 0)
        return rc;
      break;
    case 15: f->payload = c.p - value, f->payload_len = (size_t)value; break;
    default: break; /* unknown: skipped */
    }
  }
  return 0;
}

int ht_wire_envelope_decode_general(ht_arena *arena, const uint8_t *data,
                                    size_t len, ht_envelope *env) {
  fields f = {0};
  int rc = walk_envelope(data, len, &f);
  if (rc != 0) {
    /* A newer sender may use encodings this version cannot read. */
    if (f.has_version && f.version > HT_WIRE_VERSION)
      return HT_EVERSION;
    return rc;
  }
  /* protobuf-c keeps the low 32 bits of a varint for 32-bit fields */
  uint32_t version = (uint32_t)f.version, status = (uint32_t)f.status;
  int type = (int)(uint32_t)f.type;
  char *operation = "";
  if (f.operation_len > 0) {
    operation = ht_arena_alloc(arena, f.operation_len + 1);
    if (operation == NULL)
      return HT_ENOMEM;
    memcpy(operation, f.operation, f.operation_len);
    operation[f.operation_len] = '\0';
  }
  if (version == 0)
    return HT_EMALFORMED;
  if (version > HT_WIRE_VERSION)
    return HT_EVERSION;
  if (type < HT_MSG_REQUEST || type > HT_MSG_ERROR)
    return HT_EMSGTYPE;
  if (f.has_trace && ht_context_validate(&f.trace) != 0)
    return HT_EBADCONTEXT;
  *env = (ht_envelope){
      .version = version,
      .type = (ht_msg_type)type,
      .sequence = f.sequence,
      .operation = operation,
      .status = (int32_t)((status >> 1) ^ (uint32_t)-(int32_t)(status & 1)),
      .has_trace = f.has_trace,
      .trace = f.trace,
      .payload = f.payload_len > 0 ? f.payload : NULL,
      .payload_len = f.payload_len,
  };
  return 0;
}
