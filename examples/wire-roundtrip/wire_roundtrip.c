/* wire-roundtrip: the request path of one traced write (client ->
 * primary -> two replicas, and the replies), as envelopes. Each envelope
 * is framed the way the messenger sends it (header + caller payload),
 * the frames are concatenated into one byte stream, read back through a
 * frame reader in small uneven chunks, and printed with their trace
 * context in W3C and B3 form. Ends with what a hostile frame gets. */
#include <stdio.h>
#include <string.h>

#include "hoptrace.h"

#define TRACE_HI 0x4bf92f3577b34da6ull
#define TRACE_LO 0xa3ce929d0e0e4736ull

typedef struct hop {
  ht_msg_type type;
  uint64_t sequence;
  const char *operation;
  int32_t status;
  uint64_t span, parent;
  const char *payload;
} hop;

/* Requests carry the sender's client span; replies carry the server span.
 * client span c1 -> primary server span 91 (child of c1) -> client spans
 * 71, 72 to the replicas (children of 91) -> replica server spans a1, a2. */
static const hop hops[] = {
    {HT_MSG_REQUEST, 1, "osd.write", 0, 0xc1, 0, "object-42: hello"},
    {HT_MSG_REQUEST, 7, "osd.replicate", 0, 0x71, 0x91, "object-42: hello"},
    {HT_MSG_REQUEST, 8, "osd.replicate", 0, 0x72, 0x91, "object-42: hello"},
    {HT_MSG_REPLY, 7, "osd.replicate", 0, 0xa1, 0x71, ""},
    {HT_MSG_REPLY, 8, "osd.replicate", 0, 0xa2, 0x72, ""},
    {HT_MSG_REPLY, 1, "osd.write", 0, 0x91, 0xc1, "ok"},
};
#define N_HOPS (sizeof(hops) / sizeof(hops[0]))

static size_t frame_hop(const hop *h, uint8_t *out, size_t cap) {
  ht_envelope env = {
      .type = h->type,
      .sequence = h->sequence,
      .operation = h->operation,
      .status = h->status,
      .has_trace = true,
      .trace = {TRACE_HI, TRACE_LO, h->span, h->parent, HT_FLAG_SAMPLED},
      .payload = h->payload,
      .payload_len = strlen(h->payload),
  };
  size_t header_len;
  int rc = ht_frame_encode_header(&env, out, cap, &header_len);
  if (rc != 0) {
    fprintf(stderr, "encode: %s\n", ht_strerror(rc));
    return 0;
  }
  /* a writev would send these two pieces; here they are appended */
  memcpy(out + header_len, env.payload, env.payload_len);
  return header_len + env.payload_len;
}

static void print_envelope(int index, const ht_envelope *env) {
  char w3c[HT_TRACEPARENT_LEN + 1], b3[HT_B3_MAX_LEN + 1];
  ht_traceparent_format(&env->trace, w3c, sizeof(w3c));
  ht_b3_format(&env->trace, ht_b3_sampling_of(&env->trace), b3, sizeof(b3), NULL);
  printf("#%d %-7s seq=%-2llu op=%-13s status=%d payload=%zu B \"%.*s\"\n", index,
         ht_msg_type_name(env->type), (unsigned long long)env->sequence,
         env->operation, env->status, env->payload_len, (int)env->payload_len,
         (const char *)env->payload);
  printf("   span %016llx parent %016llx flags 0x%x\n",
         (unsigned long long)env->trace.span_id,
         (unsigned long long)env->trace.parent_span_id, env->trace.flags);
  printf("   traceparent: %s\n   b3:          %s\n", w3c, b3);
}

static int read_stream(const uint8_t *stream, size_t len) {
  ht_frame_reader *reader;
  if (ht_frame_reader_new(0, &reader) != 0)
    return 1;
  size_t at = 0;
  int index = 0, rc = 0;
  for (size_t chunk = 1; at < len; chunk = chunk % 13 + 5) {
    size_t n = len - at < chunk ? len - at : chunk;
    size_t off = 0;
    while (off < n) {
      ht_envelope env;
      size_t used;
      rc = ht_frame_reader_feed(reader, stream + at + off, n - off, &used, &env);
      off += used;
      if (rc == HT_EAGAIN)
        break;
      if (rc != 0) {
        fprintf(stderr, "decode: %s\n", ht_strerror(rc));
        ht_frame_reader_free(reader);
        return 1;
      }
      print_envelope(++index, &env);
    }
    at += n;
  }
  rc = ht_frame_reader_finish(reader);
  ht_frame_reader_free(reader);
  printf("%d envelopes read back from %zu bytes; end of stream: %s\n", index,
         len, ht_strerror(rc));
  return rc != 0 || index != (int)N_HOPS;
}

static void show_hostile_frames(void) {
  static const struct {
    const char *what;
    uint8_t bytes[16];
    size_t len;
  } hostile[] = {
      {"length 4 GiB", {0xff, 0xff, 0xff, 0xff}, 4},
      {"version 9", {0, 0, 0, 4, 0x08, 0x09, 0x10, 0x01}, 8},
      {"11-byte varint",
       {0, 0, 0, 12, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
       16},
      {"cut short", {0, 0, 0, 9, 0x08, 0x01}, 6},
  };
  printf("\nhostile frames:\n");
  for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
    ht_frame_reader *reader;
    if (ht_frame_reader_new(0, &reader) != 0)
      return;
    ht_envelope env;
    size_t used;
    int rc = ht_frame_reader_feed(reader, hostile[i].bytes, hostile[i].len, &used, &env);
    if (rc == HT_EAGAIN)
      rc = ht_frame_reader_finish(reader);
    printf("  %-14s -> %s (%s)\n", hostile[i].what, ht_err_name(rc), ht_strerror(rc));
    ht_frame_reader_free(reader);
  }
}

int main(void) {
  static uint8_t stream[4096];
  size_t len = 0;
  for (size_t i = 0; i < N_HOPS; i++) {
    size_t n = frame_hop(&hops[i], stream + len, sizeof(stream) - len);
    if (n == 0)
      return 1;
    len += n;
  }
  printf("trace %016llx%016llx: %zu envelopes framed into %zu bytes\n\n",
         (unsigned long long)TRACE_HI, (unsigned long long)TRACE_LO, N_HOPS, len);
  int rc = read_stream(stream, len);
  show_hostile_frames();
  return rc;
}
