/* Wire benchmark: encode and decode cost per message (no payload, 64 B,
 * 4 KiB; full trace context), bytes a context adds, malloc calls per
 * decode; the rows marked "gen" carry flags above 127 (a two-byte
 * varint, which the canonical fast path leaves to the general decoder).
 * Prints a table and writes bench/results/wire.txt. BENCH_iterations
 * (environment) sets the loop count, e.g. small under callgrind. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bench_report.h"
#include "hoptrace/wire.h"

#ifdef BENCH_COUNT_MALLOC
/* Every malloc of the process is counted (glibc's entry points). */
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *ptr, size_t size);
void __libc_free(void *ptr);
static size_t malloc_calls;
void *malloc(size_t size) { malloc_calls++; return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { malloc_calls++; return __libc_calloc(n, size); }
void *realloc(void *ptr, size_t size) { malloc_calls++; return __libc_realloc(ptr, size); }
void free(void *ptr) { __libc_free(ptr); }
#define MALLOC_CALLS() malloc_calls
#else
#define MALLOC_CALLS() ((size_t)0)
#endif

static unsigned iterations = 2000000u;

static volatile size_t sink;

static ht_envelope traced_envelope(const void *payload, size_t len) {
  return (ht_envelope){
      .type = HT_MSG_REQUEST,
      .sequence = 123456789,
      .operation = "osd.write",
      .has_trace = true,
      .trace = {0x4bf92f3577b34da6ull, 0xa3ce929d0e0e4736ull,
                0x00f067aa0ba902b7ull, 0x05e3ac9a4f6e3b90ull, HT_FLAG_SAMPLED},
      .payload = payload,
      .payload_len = len,
  };
}

static double encode_ns(const ht_envelope *env) {
  uint8_t header[256];
  size_t len = 0;
  uint64_t start = bench_now_ns();
  for (unsigned i = 0; i < iterations; i++) {
    ht_frame_encode_header(env, header, sizeof(header), &len);
    sink += len;
  }
  return (double)(bench_now_ns() - start) / iterations;
}

static double decode_ns(const uint8_t *frame, size_t frame_len, double *allocs) {
  ht_frame_reader *reader;
  if (ht_frame_reader_new(0, &reader) != 0)
    abort();
  ht_envelope env;
  size_t used;
  ht_frame_reader_feed(reader, frame, frame_len, &used, &env); /* warm-up */
  size_t calls_before = MALLOC_CALLS();
  uint64_t start = bench_now_ns();
  for (unsigned i = 0; i < iterations; i++) {
    if (ht_frame_reader_feed(reader, frame, frame_len, &used, &env) != 0)
      abort();
    sink += env.payload_len;
  }
  double ns = (double)(bench_now_ns() - start) / iterations;
  *allocs = (double)(MALLOC_CALLS() - calls_before) / iterations;
  ht_frame_reader_free(reader);
  return ns;
}

int main(void) {
  const char *n = getenv("BENCH_ITERATIONS");
  if (n != NULL && atoi(n) > 0)
    iterations = (unsigned)atoi(n);
  bench_report *report = bench_report_open("wire");
  static uint8_t payload[4096], frame[8192];
  memset(payload, 0xab, sizeof(payload));
  static const size_t sizes[] = {0, 64, 4096, 0, 64, 4096};
  bench_report_line(report, "\n%-10s %12s %12s %14s %12s\n", "payload", "frame B",
                    "encode ns", "decode ns", "mallocs/dec");
  for (size_t i = 0; i < 6; i++) {
    ht_envelope env = traced_envelope(payload, sizes[i]);
    bool general = i >= 3;
    if (general)
      env.trace.flags |= 0x80; /* a reserved bit: not canonical */
    size_t frame_len;
    if (ht_frame_encode(&env, frame, sizeof(frame), &frame_len) != 0)
      abort();
    double allocs, enc = encode_ns(&env), dec = decode_ns(frame, frame_len, &allocs);
    bench_report_line(report, "%-6zu%-4s %12zu %12.1f %14.1f %12.3f\n", sizes[i],
                      general ? "gen" : "", frame_len, enc, dec, allocs);
  }
#ifndef BENCH_COUNT_MALLOC
  bench_report_line(report, "(malloc counting off in sanitizer builds)\n");
#endif
  ht_envelope bare = traced_envelope(NULL, 0);
  bare.has_trace = false;
  ht_envelope full = traced_envelope(NULL, 0);
  ht_envelope root64 = full;
  root64.trace.trace_id_hi = 0;
  root64.trace.parent_span_id = 0;
  bench_report_line(report, "\nbytes added by a trace context: full 128-bit child %zu, "
                    "64-bit root %zu, none %zu\n",
                    ht_frame_header_size(&full) - ht_frame_header_size(&bare),
                    ht_frame_header_size(&root64) - ht_frame_header_size(&bare),
                    (size_t)0);
  bench_report_line(report, "encode writes the header only: the payload is sent from "
                    "the caller's buffer (scatter-gather)\n");
  bench_report_close(report);
  return 0;
}
