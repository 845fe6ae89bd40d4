/* Frame reader: any chunking gives the same envelopes, the maximum is
 * enforced on the prefix, truncation is reported at every offset, and
 * steady-state decoding does not allocate. Must never: depend on
 * unseeded randomness or on timing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>

#include "envelope_gen.h"
#include "hoptrace/error.h"
#include "hoptrace/wire.h"
#include "wire/frame_reader_stats.h"

#define STREAM_FRAMES 300

typedef struct stream {
  gen_envelope frames[STREAM_FRAMES];
  uint8_t *bytes;
  size_t len;
} stream;

static int make_stream(void **state) {
  stream *s = calloc(1, sizeof(*s));
  s->bytes = malloc(STREAM_FRAMES * 700);
  test_rng rng = {4242};
  for (int i = 0; i < STREAM_FRAMES; i++) {
    gen_envelope_fill(&s->frames[i], &rng);
    size_t len;
    if (ht_frame_encode(&s->frames[i].env, s->bytes + s->len,
                        STREAM_FRAMES * 700 - s->len, &len) != 0)
      return -1;
    s->len += len;
  }
  *state = s;
  return 0;
}

static int free_stream(void **state) {
  stream *s = *state;
  free(s->bytes);
  free(s);
  return 0;
}

/* Feeds the stream in chunks drawn by next_chunk; checks every frame. */
static void read_in_chunks(const stream *s, test_rng *rng, size_t max_chunk) {
  ht_frame_reader *reader;
  assert_int_equal(ht_frame_reader_new(0, &reader), 0);
  assert_int_equal(ht_frame_reader_frame_len(reader), 0);
  size_t at = 0;
  int got = 0;
  while (at < s->len) {
    size_t chunk = max_chunk == 1 ? 1 : 1 + (size_t)test_rng_below(rng, max_chunk);
    if (chunk > s->len - at)
      chunk = s->len - at;
    const uint8_t *p = s->bytes + at;
    size_t left = chunk;
    for (;;) {
      ht_envelope env;
      size_t used;
      int rc = ht_frame_reader_feed(reader, p, left, &used, &env);
      p += used;
      left -= used;
      if (rc == HT_EAGAIN) {
        assert_int_equal(left, 0);
        break;
      }
      assert_int_equal(rc, 0);
      assert_true(got < STREAM_FRAMES);
      if (!envelope_matches(&s->frames[got].env, &env))
        fail_msg("frame %d differs (max chunk %zu)", got, max_chunk);
      /* the frame's length on the wire, however it was cut */
      assert_int_equal(ht_frame_reader_frame_len(reader),
                       ht_frame_header_size(&s->frames[got].env) +
                           s->frames[got].env.payload_len);
      got++;
      if (left == 0)
        break;
    }
    at += chunk;
  }
  assert_int_equal(got, STREAM_FRAMES);
  assert_int_equal(ht_frame_reader_finish(reader), 0);
  assert_int_equal(ht_frame_reader_buffered(reader), 0);
  ht_frame_reader_free(reader);
}

static void whole_stream_at_once(void **state) {
  test_rng rng = {1};
  read_in_chunks(*state, &rng, ((stream *)*state)->len);
}

static void one_byte_at_a_time(void **state) {
  test_rng rng = {2};
  read_in_chunks(*state, &rng, 1);
}

static void random_chunk_sizes(void **state) {
  test_rng rng = {3};
  for (size_t max = 2; max < 2000; max = max * 3 + 1)
    read_in_chunks(*state, &rng, max);
}

static void oversize_prefix_is_refused_before_the_body(void **state) {
  (void)state;
  ht_frame_reader *reader;
  assert_int_equal(ht_frame_reader_new(100, &reader), 0);
  uint8_t prefix[4] = {0, 0, 0, 101};
  ht_envelope env;
  size_t used;
  assert_int_equal(ht_frame_reader_feed(reader, prefix, 3, &used, &env), HT_EAGAIN);
  assert_int_equal(ht_frame_reader_feed(reader, prefix + 3, 1, &used, &env),
                   HT_EFRAMETOOBIG);
  assert_int_equal(ht_wire_frame_reader_system_allocs(reader), 0);
  /* poisoned: the stream cannot be resynchronised */
  assert_int_equal(ht_frame_reader_feed(reader, prefix, 4, &used, &env), HT_EFRAMETOOBIG);
  assert_int_equal(used, 0);
  assert_int_equal(ht_frame_reader_finish(reader), HT_EFRAMETOOBIG);
  ht_frame_reader_free(reader);

  /* 4 GiB - 1 claimed by a default reader: refused, nothing allocated */
  assert_int_equal(ht_frame_reader_new(0, &reader), 0);
  uint8_t huge[4] = {0xff, 0xff, 0xff, 0xff};
  assert_int_equal(ht_frame_reader_feed(reader, huge, 4, &used, &env), HT_EFRAMETOOBIG);
  assert_int_equal(ht_wire_frame_reader_system_allocs(reader), 0);
  ht_frame_reader_free(reader);

  /* the whole prefix and more in one chunk (read in place): refused at
   * the prefix, its 4 bytes consumed, as when it came in pieces */
  assert_int_equal(ht_frame_reader_new(100, &reader), 0);
  uint8_t chunk[4 + 101] = {0, 0, 0, 101};
  assert_int_equal(ht_frame_reader_feed(reader, chunk, sizeof(chunk), &used, &env),
                   HT_EFRAMETOOBIG);
  assert_int_equal(used, 4);
  assert_int_equal(ht_wire_frame_reader_system_allocs(reader), 0);
  assert_int_equal(ht_frame_reader_finish(reader), HT_EFRAMETOOBIG);
  ht_frame_reader_free(reader);

  assert_int_equal(ht_frame_reader_new((size_t)HT_FRAME_HARD_MAX + 1, &reader), HT_EINVAL);
}

static void truncation_at_every_offset_is_reported(void **state) {
  stream *s = *state;
  /* first few frames of the stream, cut at every byte */
  size_t len = s->len < 3000 ? s->len : 3000;
  for (size_t cut = 0; cut <= len; cut++) {
    ht_frame_reader *reader;
    assert_int_equal(ht_frame_reader_new(0, &reader), 0);
    const uint8_t *p = s->bytes;
    size_t left = cut;
    int rc;
    do {
      ht_envelope env;
      size_t used;
      rc = ht_frame_reader_feed(reader, p, left, &used, &env);
      p += used;
      left -= used;
    } while (rc == 0);
    assert_int_equal(rc, HT_EAGAIN);
    int end = ht_frame_reader_finish(reader);
    if (ht_frame_reader_buffered(reader) == 0)
      assert_int_equal(end, 0); /* cut fell between frames */
    else
      assert_int_equal(end, HT_ETRUNCATED);
    ht_frame_reader_free(reader);
  }
}

static void steady_state_decoding_does_not_allocate(void **state) {
  stream *s = *state;
  ht_frame_reader *reader;
  assert_int_equal(ht_frame_reader_new(0, &reader), 0);
  /* one-byte feeds force the buffered path; whole feeds the in-place one */
  for (int round = 0; round < 3; round++) {
    size_t before = ht_wire_frame_reader_system_allocs(reader);
    for (size_t i = 0; i < s->len; i++) {
      ht_envelope env;
      size_t used;
      int rc = ht_frame_reader_feed(reader, s->bytes + i, 1, &used, &env);
      assert_true(rc == 0 || rc == HT_EAGAIN);
    }
    const uint8_t *p = s->bytes;
    size_t left = s->len;
    while (left > 0) {
      ht_envelope env;
      size_t used;
      assert_int_equal(ht_frame_reader_feed(reader, p, left, &used, &env), 0);
      p += used;
      left -= used;
    }
    if (round > 0) /* round 0 warms the buffers up */
      assert_int_equal(ht_wire_frame_reader_system_allocs(reader), before);
  }
  ht_frame_reader_free(reader);
}

static void big_frame_buffers_are_released(void **state) {
  (void)state;
  ht_frame_reader *reader;
  assert_int_equal(ht_frame_reader_new(0, &reader), 0);
  size_t payload_len = 1 << 20;
  uint8_t *payload = calloc(1, payload_len);
  uint8_t *frame = malloc(payload_len + 64);
  ht_envelope in = {.type = HT_MSG_REQUEST, .payload = payload, .payload_len = payload_len};
  size_t len, used;
  assert_int_equal(ht_frame_encode(&in, frame, payload_len + 64, &len), 0);
  ht_envelope out;
  /* two chunks: the body is buffered */
  assert_int_equal(ht_frame_reader_feed(reader, frame, 10, &used, &out), HT_EAGAIN);
  assert_int_equal(ht_frame_reader_feed(reader, frame + 10, len - 10, &used, &out), 0);
  assert_int_equal(out.payload_len, payload_len);
  size_t allocs = ht_wire_frame_reader_system_allocs(reader);
  /* the next small frame buffered (cut inside its body) must reallocate:
   * the 1 MiB buffer was dropped (decoding a canonical frame takes no
   * scratch memory, so the one malloc is the body's) */
  ht_envelope small = {.type = HT_MSG_REQUEST, .payload = payload, .payload_len = 10};
  assert_int_equal(ht_frame_encode(&small, frame, 64, &len), 0);
  assert_int_equal(ht_frame_reader_feed(reader, frame, len - 3, &used, &out), HT_EAGAIN);
  assert_int_equal(ht_frame_reader_feed(reader, frame + len - 3, 3, &used, &out), 0);
  assert_int_equal(ht_wire_frame_reader_system_allocs(reader), allocs + 1);
  free(payload);
  free(frame);
  ht_frame_reader_free(reader);
}

/* A peer announcing a big frame and sending little makes the reader hold
 * about what arrived, not what was announced (a slowloris peer); the
 * bytes survive every growth of the buffer. */
static void announced_length_is_not_allocated(void **state) {
  (void)state;
  ht_frame_reader *reader;
  assert_int_equal(ht_frame_reader_new(0, &reader), 0);
  size_t payload_len = 4u << 20;
  uint8_t *payload = malloc(payload_len);
  for (size_t i = 0; i < payload_len; i++)
    payload[i] = (uint8_t)(i * 7 + (i >> 13));
  uint8_t *frame = malloc(payload_len + 64);
  ht_envelope in = {.type = HT_MSG_REQUEST, .payload = payload, .payload_len = payload_len};
  size_t len, used, at = 0;
  assert_int_equal(ht_frame_encode(&in, frame, payload_len + 64, &len), 0);
  ht_envelope out;
  assert_int_equal(ht_frame_reader_feed(reader, frame, 4, &used, &out), HT_EAGAIN);
  at += 4;
  /* prefix only */
  assert_int_equal(ht_wire_frame_reader_body_capacity(reader), 0);
  assert_int_equal(ht_frame_reader_feed(reader, frame + at, 1000, &used, &out), HT_EAGAIN);
  at += 1000;
  assert_true(ht_wire_frame_reader_body_capacity(reader) <= 4096);
  for (int i = 0; i < 200; i++) { /* a drip: a few bytes at a time */
    assert_int_equal(ht_frame_reader_feed(reader, frame + at, 7, &used, &out), HT_EAGAIN);
    at += 7;
  }
  assert_true(ht_wire_frame_reader_body_capacity(reader) <= 4096);
  assert_int_equal(ht_frame_reader_feed(reader, frame + at, 256 * 1024, &used, &out),
                   HT_EAGAIN);
  at += 256 * 1024;
  assert_int_equal(ht_frame_reader_buffered(reader), at);
  assert_true(ht_wire_frame_reader_body_capacity(reader) >= at - 4);
  assert_true(ht_wire_frame_reader_body_capacity(reader) <= 2 * at);
  assert_int_equal(ht_frame_reader_feed(reader, frame + at, len - at, &used, &out), 0);
  assert_int_equal(out.payload_len, payload_len);
  assert_memory_equal(out.payload, payload, payload_len);
  free(payload);
  free(frame);
  ht_frame_reader_free(reader);
}

static void bad_arguments(void **state) {
  (void)state;
  ht_frame_reader *reader;
  assert_int_equal(ht_frame_reader_new(0, NULL), HT_EINVAL);
  assert_int_equal(ht_frame_reader_new(0, &reader), 0);
  ht_envelope env;
  size_t used = 99;
  assert_int_equal(ht_frame_reader_feed(reader, NULL, 1, &used, &env), HT_EINVAL);
  assert_int_equal(used, 0);
  assert_int_equal(ht_frame_reader_feed(reader, NULL, 0, &used, &env), HT_EAGAIN);
  /* ht_envelope_decode alike: no bytes is an envelope without version */
  assert_int_equal(ht_envelope_decode(reader, NULL, 1, &env), HT_EINVAL);
  assert_int_equal(ht_envelope_decode(reader, NULL, 0, &env), HT_EMALFORMED);
  assert_int_equal(ht_envelope_decode(NULL, "\x08\x01", 2, &env), HT_EINVAL);
  assert_int_equal(ht_envelope_decode(reader, "\x08\x01", 2, NULL), HT_EINVAL);
  assert_int_equal(ht_frame_reader_finish(NULL), HT_EINVAL);
  ht_frame_reader_free(reader);
  ht_frame_reader_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(whole_stream_at_once),
      cmocka_unit_test(one_byte_at_a_time),
      cmocka_unit_test(random_chunk_sizes),
      cmocka_unit_test(oversize_prefix_is_refused_before_the_body),
      cmocka_unit_test(truncation_at_every_offset_is_reported),
      cmocka_unit_test(steady_state_decoding_does_not_allocate),
      cmocka_unit_test(big_frame_buffers_are_released),
      cmocka_unit_test(announced_length_is_not_allocated),
      cmocka_unit_test(bad_arguments),
  };
  return cmocka_run_group_tests(tests, make_stream, free_stream);
}
