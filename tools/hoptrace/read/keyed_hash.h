/* SipHash-2-4 (Aumasson and Bernstein, 2012), fed in pieces: a 64-bit
 * hash keyed with 128 random bits a run, so that events a trace holds
 * cannot be chosen to collide (FNV-1a's can: dedupe.h would drop one of
 * two different events as the other's copy). */
#ifndef HT_TOOL_KEYED_HASH_H
#define HT_TOOL_KEYED_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct keyed_hash {
  uint64_t v0, v1, v2, v3;
  uint64_t tail; /* the bytes of the word not complete yet */
  uint64_t len;
} keyed_hash;

/* key NULL: this run's random key (the same for the whole process). */
void keyed_hash_init(keyed_hash *h, const uint64_t key[2]);
void keyed_hash_add(keyed_hash *h, const void *p, size_t n);
uint64_t keyed_hash_end(keyed_hash *h);

#endif
