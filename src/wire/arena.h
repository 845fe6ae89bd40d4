/* Bump allocator for decoded envelopes: one block reused per message, so
 * steady-state decoding calls malloc zero times. Internal to src/wire/.
 * Must never: hand out memory that is not 16-byte aligned, or fail
 * without setting `failed`. */
#ifndef HT_WIRE_ARENA_H
#define HT_WIRE_ARENA_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ht_arena_spill ht_arena_spill;

typedef struct ht_arena {
  unsigned char *base;
  size_t cap;
  size_t used;
  ht_arena_spill *spills; /* blocks taken when base was full */
  size_t spill_bytes;     /* their total size, to grow base on reset */
  bool failed;            /* an allocation failed since the last reset */
  size_t system_allocs;   /* malloc calls made, for tests and benchmarks */
} ht_arena;

void ht_arena_init(ht_arena *arena);

/* 16-byte aligned, or NULL (and arena->failed) when memory runs out. */
void *ht_arena_alloc(ht_arena *arena, size_t size);

/* Forgets every allocation. If the last round spilled, the base block is
 * regrown to hold it all next time, but never beyond keep_max bytes;
 * a base larger than keep_max is released. */
void ht_arena_reset(ht_arena *arena, size_t keep_max);

void ht_arena_release(ht_arena *arena);

#endif
