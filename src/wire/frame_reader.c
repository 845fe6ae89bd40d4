/* Incremental frame reader: length prefix, bounded body buffer, decode.
 * Must never allocate before the prefix has passed the maximum check,
 * never hold much more than the bytes that actually arrived (not the
 * length a peer announced), and never keep more than one frame (plus
 * decode scratch) per reader. */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "envelope_codec.h"
#include "frame_reader_stats.h"
#include "hoptrace/error.h"
#include "hoptrace/wire.h"
#include "wire_bytes.h"

/* Buffers above this size are released once their frame is handed out, so
 * an idle connection that once saw a big frame does not keep it. */
#define READER_KEEP_BYTES (64u * 1024u)
/* First body buffer of a frame that arrives in pieces. */
#define BODY_MIN_BYTES 4096u

struct ht_frame_reader {
  size_t max_frame;
  uint8_t prefix[HT_FRAME_PREFIX_LEN];
  size_t prefix_have;
  size_t frame_len;
  uint8_t *body;
  size_t body_cap;
  size_t body_have;
  size_t body_allocs;
  size_t delivered_len; /* prefix + body of the last frame handed out */
  int error; /* sticky: a stream with a bad frame cannot resynchronise */
  ht_arena arena;
};

int ht_frame_reader_new(size_t max_frame, ht_frame_reader **out) {
  if (out == NULL || max_frame > HT_FRAME_HARD_MAX)
    return HT_EINVAL;
  ht_frame_reader *reader = calloc(1, sizeof(*reader));
  if (reader == NULL)
    return HT_ENOMEM;
  reader->max_frame = max_frame != 0 ? max_frame : HT_FRAME_DEFAULT_MAX;
  ht_arena_init(&reader->arena);
  *out = reader;
  return 0;
}

void ht_frame_reader_free(ht_frame_reader *reader) {
  if (reader == NULL)
    return;
  ht_arena_release(&reader->arena);
  free(reader->body);
  free(reader);
}

size_t ht_wire_frame_reader_system_allocs(const ht_frame_reader *reader) {
  return reader->body_allocs + reader->arena.system_allocs;
}

size_t ht_frame_reader_frame_len(const ht_frame_reader *reader) {
  return reader->delivered_len;
}

size_t ht_wire_frame_reader_body_capacity(const ht_frame_reader *reader) {
  return reader->body_cap;
}

size_t ht_frame_reader_buffered(const ht_frame_reader *reader) {
  return reader->prefix_have + reader->body_have;
}

int ht_frame_reader_finish(ht_frame_reader *reader) {
  if (reader == NULL)
    return HT_EINVAL;
  if (reader->error != 0)
    return reader->error;
  return reader->prefix_have > 0 ? HT_ETRUNCATED : 0;
}

/* Drops what the previous frame handed out: env pointers die here.
 * The common round (nothing spilled, no big buffer) inline and without a
 * call, the rest out of line: with both halves inline, ht_envelope_decode
 * saved five registers around them (40 instructions a decode, 19 now;
 * issue 31). */
static void forget_previous_frame_slow(ht_frame_reader *reader) {
  ht_arena_reset(&reader->arena, READER_KEEP_BYTES);
  if (reader->body_have == 0 && reader->body_cap > READER_KEEP_BYTES) {
    free(reader->body);
    reader->body = NULL;
    reader->body_cap = 0;
  }
}

/* The common round alone: false when the slow half must run. */
static inline bool forget_previous_frame_quick(ht_frame_reader *reader) {
  return reader->body_cap <= READER_KEEP_BYTES &&
         ht_arena_reset_quick(&reader->arena, READER_KEEP_BYTES);
}

__attribute__((always_inline)) static inline void forget_previous_frame(ht_frame_reader *reader) {
  if (!forget_previous_frame_quick(reader))
    forget_previous_frame_slow(reader);
}

/* The caller's bytes, or a readable empty input for (NULL, 0); NULL
 * for NULL with a length. One test on the common path: the NULL check
 * and the substitute apart were three more (issue 31). */
static inline const uint8_t *input_bytes(const void *data, size_t len) {
  static const uint8_t no_input[1];
  if (data != NULL)
    return data;
  return len == 0 ? no_input : NULL;
}

static int poison(ht_frame_reader *reader, int error) {
  reader->error = error;
  return error;
}

static int deliver(ht_frame_reader *reader, const uint8_t *body,
                   ht_envelope *env) {
  int rc =
      ht_wire_envelope_decode(&reader->arena, body, reader->frame_len, env);
  reader->prefix_have = 0;
  reader->body_have = 0;
  if (rc != 0)
    return poison(reader, rc);
  reader->delivered_len = HT_FRAME_PREFIX_LEN + reader->frame_len;
  return 0;
}

/* Makes room for `need` body bytes, growing by doubling with what arrived
 * and never past the frame's length. Allocating the announced length at
 * once let a peer that announces 16 MiB and drips a few bytes (or stalls)
 * cost 16 MiB of address space per connection, and the heap pages glibc
 * reused for such buffers stayed resident (sim-hostile's slowloris made a
 * server's RSS climb by 0.6 MiB/s). */
static int reserve_body(ht_frame_reader *reader, size_t need) {
  if (reader->body_cap >= need)
    return 0;
  size_t cap = reader->body_cap * 2;
  if (cap < BODY_MIN_BYTES)
    cap = BODY_MIN_BYTES;
  if (cap < need)
    cap = need;
  if (cap > reader->frame_len)
    cap = reader->frame_len;
  uint8_t *grown;
  if (reader->body_have == 0) { /* nothing to keep: no copy */
    free(reader->body);
    reader->body = NULL;
    reader->body_cap = 0;
    grown = malloc(cap);
  } else {
    grown = realloc(reader->body, cap);
  }
  reader->body_allocs++;
  if (grown == NULL)
    return HT_ENOMEM;
  reader->body = grown;
  reader->body_cap = cap;
  return 0;
}

int ht_frame_reader_feed(ht_frame_reader *reader, const void *data,
                         size_t len, size_t *consumed, ht_envelope *env) {
  if (consumed != NULL)
    *consumed = 0;
  const uint8_t *in = input_bytes(data, len);
  if (reader == NULL || consumed == NULL || env == NULL || in == NULL)
    return HT_EINVAL;
  if (reader->error != 0)
    return reader->error;
  forget_previous_frame(reader);
  size_t used = 0;

  if (reader->prefix_have == 0 && len >= HT_FRAME_PREFIX_LEN) {
    /* the whole prefix in this chunk, as nearly always: read in place
     * (copying it first was 29 instructions a message, issue 31) */
    reader->frame_len = wire_load_be32(in);
    reader->prefix_have = HT_FRAME_PREFIX_LEN;
    used = HT_FRAME_PREFIX_LEN;
    *consumed = used;
    if (reader->frame_len > reader->max_frame)
      return poison(reader, HT_EFRAMETOOBIG);
  } else if (reader->prefix_have < HT_FRAME_PREFIX_LEN) {
    size_t take = HT_FRAME_PREFIX_LEN - reader->prefix_have;
    if (take > len)
      take = len;
    memcpy(reader->prefix + reader->prefix_have, in, take);
    reader->prefix_have += take;
    used += take;
    *consumed = used;
    if (reader->prefix_have < HT_FRAME_PREFIX_LEN)
      return HT_EAGAIN;
    reader->frame_len = wire_load_be32(reader->prefix);
    if (reader->frame_len > reader->max_frame)
      return poison(reader, HT_EFRAMETOOBIG);
  }

  size_t left = len - used;
  if (reader->body_have == 0 && left >= reader->frame_len) {
    /* Whole body in the caller's chunk: decode in place, no copy. */
    *consumed = used + reader->frame_len;
    return deliver(reader, in + used, env);
  }
  size_t take = reader->frame_len - reader->body_have;
  if (take > left)
    take = left;
  int rc = reserve_body(reader, reader->body_have + take);
  if (rc != 0)
    return poison(reader, rc);
  if (take > 0)
    memcpy(reader->body + reader->body_have, in + used, take);
  reader->body_have += take;
  *consumed = used + take;
  if (reader->body_have < reader->frame_len)
    return HT_EAGAIN;
  return deliver(reader, reader->body, env);
}

/* ht_envelope_decode after a slow reset: out of line, so that both of
 * its paths end in a tail call and the common one saves no register. */
static int __attribute__((noinline))
decode_after_slow_reset(ht_frame_reader *reader, const uint8_t *data,
                        size_t len, ht_envelope *env) {
  forget_previous_frame_slow(reader);
  return ht_wire_envelope_decode(&reader->arena, data, len, env);
}

int ht_envelope_decode(ht_frame_reader *reader, const void *data, size_t len,
                       ht_envelope *env) {
  const uint8_t *in = input_bytes(data, len);
  if (reader == NULL || env == NULL || in == NULL)
    return HT_EINVAL;
  if (!forget_previous_frame_quick(reader))
    return decode_after_slow_reset(reader, in, len, env);
  return ht_wire_envelope_decode(&reader->arena, in, len, env);
}
