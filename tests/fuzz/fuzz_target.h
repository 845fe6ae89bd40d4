/* The libFuzzer entry point every target defines. Built with libFuzzer
 * (-fsanitize=fuzzer) when HT_FUZZ is on, and always with replay_main.c as
 * a regression test that replays the seed corpus. */
#ifndef HT_FUZZ_TARGET_H
#define HT_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: crash loudly so both libFuzzer and ctest see it. */
#define FUZZ_CHECK(cond)                                                       \
  do {                                                                         \
    if (!(cond))                                                               \
      fuzz_check_failed(#cond, __FILE__, __LINE__);                            \
  } while (0)

void fuzz_check_failed(const char *what, const char *file, int line);

/* The input read a byte at a time; 0 past its end. */
typedef struct reader {
  const uint8_t *p;
  size_t left;
} reader;

static inline uint8_t byte(reader *r) {
  if (r->left == 0)
    return 0;
  r->left--;
  return *r->p++;
}

#endif
