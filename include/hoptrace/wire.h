/* Envelope codec and framing.
 *
 * Frame = 4-byte big-endian length + protobuf `Envelope` (schema:
 * src/wire/hoptrace.proto). Encoding never copies the payload: it writes a
 * header (length prefix, envelope fields, payload tag and length) into a
 * caller buffer, and the frame on the wire is that header followed by the
 * caller's payload bytes (two-element scatter-gather write).
 *
 * Decoding goes through an ht_frame_reader, which accepts input in chunks
 * of any size, checks the length prefix against a maximum before it
 * allocates, and decodes into per-reader scratch memory: no malloc per
 * message once the reader has warmed up to the message sizes it sees.
 *
 * Thread safety: the encode functions are pure. A reader is owned by one
 * thread at a time; different readers are independent.
 */
#ifndef HOPTRACE_WIRE_H
#define HOPTRACE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hoptrace/api.h"
#include "hoptrace/context.h"
#include "hoptrace/msg_type.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The envelope version this library writes and the highest it reads. */
#define HT_WIRE_VERSION 1u

/* Bytes of the big-endian length prefix. */
#define HT_FRAME_PREFIX_LEN 4u

/* Default and hard upper bound of a frame's length (prefix excluded). */
#define HT_FRAME_DEFAULT_MAX (16u * 1024u * 1024u)
#define HT_FRAME_HARD_MAX (1024u * 1024u * 1024u)

/* Unknown (future) fields an envelope may carry before it is rejected as
 * malformed: bounds the decoder's memory per frame. */
#define HT_ENVELOPE_MAX_UNKNOWN_FIELDS 64u

/* A plain view of one envelope. When encoding, the caller owns every
 * pointer. When produced by a reader, every pointer points into the
 * reader's scratch memory and stays valid until the next call of
 * ht_frame_reader_feed/finish/free on that reader: copy what you keep. */
typedef struct ht_envelope {
  uint32_t version;      /* HT_WIRE_VERSION when encoding (0 = default) */
  ht_msg_type type;
  uint64_t sequence;     /* correlation sequence number */
  const char *operation; /* NUL-terminated; NULL encodes as "" */
  int32_t status;        /* 0 = ok; replies and errors carry a code */
  bool has_trace;        /* false: the envelope has no trace bytes */
  ht_trace_context trace;
  const void *payload;
  size_t payload_len;
} ht_envelope;

/* An upper bound of the header size of any envelope whose operation is
 * operation_len bytes long (prefix included). A buffer of this size
 * never gives HT_ENOSPC, and lets ht_frame_encode_header write in one
 * pass without computing the exact size first. */
#define HT_FRAME_HEADER_MAX(operation_len) ((size_t)96u + (size_t)(operation_len))

/* Exact size of the header ht_frame_encode_header would write for env,
 * or 0 if env cannot be encoded (bad type, frame over HT_FRAME_HARD_MAX). */
HT_API size_t ht_frame_header_size(const ht_envelope *env);

/* Writes the frame header for env into header[0..cap) and its length into
 * *header_len. The frame is header followed by env->payload_len bytes of
 * env->payload, which is not read or copied here. If env->has_trace the
 * context must be valid (HT_EBADCONTEXT). Errors: HT_EINVAL (NULL, bad
 * type, payload_len without payload), HT_ENOSPC, HT_EFRAMETOOBIG. */
HT_API int ht_frame_encode_header(const ht_envelope *env, uint8_t *header,
                                  size_t cap, size_t *header_len);

/* Convenience for tests and tools: the whole frame (prefix, envelope,
 * payload copied) into buf. Same errors as ht_frame_encode_header. */
HT_API int ht_frame_encode(const ht_envelope *env, uint8_t *buf, size_t cap,
                           size_t *frame_len);

typedef struct ht_frame_reader ht_frame_reader;

/* Creates a reader that refuses frames longer than max_frame bytes (prefix
 * excluded; 0 = HT_FRAME_DEFAULT_MAX; at most HT_FRAME_HARD_MAX). The
 * caller owns *out and frees it with ht_frame_reader_free. */
HT_API int ht_frame_reader_new(size_t max_frame, ht_frame_reader **out);

/* Frees the reader and everything it handed out. NULL is a no-op. */
HT_API void ht_frame_reader_free(ht_frame_reader *reader);

/* Consumes bytes from data[0..len) until one frame is complete or the
 * input runs out; *consumed tells how many were used (always set).
 * Returns 0 with *env filled when a frame was decoded; call again with the
 * rest of the input. Returns HT_EAGAIN when every byte was consumed and
 * the frame is not complete yet. Errors, after which the reader is
 * poisoned (every later call returns the same error; close the
 * connection): HT_EFRAMETOOBIG (checked on the prefix, before any
 * allocation), HT_ETRUNCATED, HT_EVARINT, HT_EWIRETYPE, HT_EMALFORMED,
 * HT_EVERSION, HT_EMSGTYPE, HT_EBADCONTEXT, HT_ENOMEM. `data` is not
 * retained after the call. */
HT_API int ht_frame_reader_feed(ht_frame_reader *reader, const void *data,
                                size_t len, size_t *consumed, ht_envelope *env);

/* End of stream: 0 if the reader is between frames, HT_ETRUNCATED if a
 * partial frame is buffered, or the poisoning error. */
HT_API int ht_frame_reader_finish(ht_frame_reader *reader);

/* Length (prefix included) of the frame the last successful
 * ht_frame_reader_feed decoded, as it was on the wire; 0 before any. */
HT_API size_t ht_frame_reader_frame_len(const ht_frame_reader *reader);

/* Bytes of the current partial frame held by the reader. */
HT_API size_t ht_frame_reader_buffered(const ht_frame_reader *reader);

/* Decodes one envelope (no length prefix) from data[0..len) into the
 * reader's scratch memory, as feed does for a complete frame. Same errors
 * and lifetime rules. Does not touch the reader's framing state. */
HT_API int ht_envelope_decode(ht_frame_reader *reader, const void *data,
                              size_t len, ht_envelope *env);

/* Name of a message type ("request"), or "unknown". Static string. */
HT_API const char *ht_msg_type_name(ht_msg_type type);

#ifdef __cplusplus
}
#endif

#endif /* HOPTRACE_WIRE_H */
