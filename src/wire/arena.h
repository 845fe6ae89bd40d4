/* Bump allocator for decoded envelopes: one block reused per message, so
 * steady-state decoding calls malloc zero times. Internal to src/wire/.
 * Must never: hand out memory that is not 16-byte aligned, or fail
 * without setting `failed`. */
#ifndef HT_WIRE_ARENA_H
#define HT_WIRE_ARENA_H

#include <stdbool.h>
#include <stddef.h>

#define HT_ARENA_ALIGN 16u

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

/* The out-of-line halves of the two below: a spill, a regrown base. */
void *ht_arena_alloc_slow(ht_arena *arena, size_t size);
void ht_arena_reset_slow(ht_arena *arena, size_t keep_max);

/* Inline, as every message pays them (a reset per decode, an alloc per
 * operation): the base block's bump and the reset of a round that did
 * not spill are a few instructions, the calls were 48 a decoded request
 * (bench/recording, "envelope encode + decode alone", issue 31). */

/* The base block's bump alone: NULL when it has no room (or size is 0),
 * and nothing else done: for a caller that keeps the slow half out of
 * line. 16-byte aligned. */
static inline void *ht_arena_alloc_quick(ht_arena *arena, size_t size) {
  size_t room = arena->cap - arena->used; /* 0 without a base */
  /* wraps to 0 only for a size above room: refused by size <= room */
  size_t aligned = (size + (HT_ARENA_ALIGN - 1)) & ~(size_t)(HT_ARENA_ALIGN - 1);
  if (size == 0 || size > room || aligned > room)
    return NULL;
  void *p = arena->base + arena->used;
  arena->used += aligned;
  return p;
}

/* 16-byte aligned, or NULL (and arena->failed) when memory runs out. */
static inline void *ht_arena_alloc(ht_arena *arena, size_t size) {
  void *p = ht_arena_alloc_quick(arena, size);
  return p != NULL ? p : ht_arena_alloc_slow(arena, size);
}

/* The reset of a round that did not spill and needs no regrowing:
 * true when done, false when ht_arena_reset must do it. */
static inline bool ht_arena_reset_quick(ht_arena *arena, size_t keep_max) {
  if (arena->spills != NULL || arena->cap > keep_max)
    return false;
  arena->used = 0; /* spill_bytes is 0 without spills */
  arena->failed = false;
  return true;
}

/* Forgets every allocation. If the last round spilled, the base block is
 * regrown to hold it all next time, but never beyond keep_max bytes;
 * a base larger than keep_max is released. */
static inline void ht_arena_reset(ht_arena *arena, size_t keep_max) {
  if (!ht_arena_reset_quick(arena, keep_max))
    ht_arena_reset_slow(arena, keep_max);
}

void ht_arena_release(ht_arena *arena);

#endif
