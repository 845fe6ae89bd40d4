/* SipHash-2-4 fed in pieces (keyed_hash.h); the reference's test vectors
 * hold (test_tool_flight). The run's key from getrandom(), drawn once. */
#include "read/keyed_hash.h"

#include <pthread.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static uint64_t run_key[2];
static pthread_once_t run_key_once = PTHREAD_ONCE_INIT;

static void draw_run_key(void) {
  if (getrandom(run_key, sizeof(run_key), 0) == (ssize_t)sizeof(run_key))
    return;
  /* no entropy to be had: still a key no trace was written against */
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  run_key[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec;
  run_key[1] = (uint64_t)getpid() * 0xc2b2ae3d27d4eb4full ^ (uint64_t)(uintptr_t)&ts;
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static void rounds(keyed_hash *h, int n) {
  for (int i = 0; i < n; i++) {
    h->v0 += h->v1;
    h->v1 = ROTL(h->v1, 13) ^ h->v0;
    h->v0 = ROTL(h->v0, 32);
    h->v2 += h->v3;
    h->v3 = ROTL(h->v3, 16) ^ h->v2;
    h->v0 += h->v3;
    h->v3 = ROTL(h->v3, 21) ^ h->v0;
    h->v2 += h->v1;
    h->v1 = ROTL(h->v1, 17) ^ h->v2;
    h->v2 = ROTL(h->v2, 32);
  }
}

static void word(keyed_hash *h, uint64_t m) {
  h->v3 ^= m;
  rounds(h, 2);
  h->v0 ^= m;
}

void keyed_hash_init(keyed_hash *h, const uint64_t key[2]) {
  if (key == NULL) {
    pthread_once(&run_key_once, draw_run_key);
    key = run_key;
  }
  *h = (keyed_hash){.v0 = key[0] ^ 0x736f6d6570736575ull, .v1 = key[1] ^ 0x646f72616e646f6dull,
                    .v2 = key[0] ^ 0x6c7967656e657261ull, .v3 = key[1] ^ 0x7465646279746573ull};
}

void keyed_hash_add(keyed_hash *h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) { /* little-endian words, whatever the host */
    h->tail |= (uint64_t)b[i] << (8 * (h->len % 8));
    if (++h->len % 8 == 0) {
      word(h, h->tail);
      h->tail = 0;
    }
  }
}

uint64_t keyed_hash_end(keyed_hash *h) {
  word(h, h->tail | h->len << 56);
  h->v2 ^= 0xff;
  rounds(h, 4);
  return h->v0 ^ h->v1 ^ h->v2 ^ h->v3;
}
