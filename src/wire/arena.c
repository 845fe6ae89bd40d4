/* Bump allocator behind the envelope decoder (the operation's copy).
 * Never frees single allocations: everything goes at reset. Must never
 * hand out memory that overlaps a live allocation. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>

#define ARENA_MIN_BLOCK 1024u

struct ht_arena_spill {
  ht_arena_spill *next;
  size_t size;
  _Alignas(16) unsigned char data[];
};

static size_t align_up(size_t n) {
  return (n + (HT_ARENA_ALIGN - 1)) & ~(size_t)(HT_ARENA_ALIGN - 1);
}

void ht_arena_init(ht_arena *arena) {
  *arena = (ht_arena){0};
}

static void *spill_alloc(ht_arena *arena, size_t size) {
  if (size > SIZE_MAX - sizeof(ht_arena_spill)) {
    arena->failed = true;
    return NULL;
  }
  ht_arena_spill *spill = malloc(sizeof(*spill) + size);
  arena->system_allocs++;
  if (spill == NULL) {
    arena->failed = true;
    return NULL;
  }
  spill->next = arena->spills;
  spill->size = size;
  arena->spills = spill;
  arena->spill_bytes += size;
  return spill->data;
}

void *ht_arena_alloc_slow(ht_arena *arena, size_t size) {
  if (size == 0)
    size = 1;
  if (size > SIZE_MAX - HT_ARENA_ALIGN) {
    arena->failed = true;
    return NULL;
  }
  size = align_up(size);
  if (arena->base != NULL && arena->cap - arena->used >= size) {
    void *p = arena->base + arena->used;
    arena->used += size;
    return p;
  }
  return spill_alloc(arena, size);
}

static void free_spills(ht_arena *arena) {
  while (arena->spills != NULL) {
    ht_arena_spill *next = arena->spills->next;
    free(arena->spills);
    arena->spills = next;
  }
}

void ht_arena_reset_slow(ht_arena *arena, size_t keep_max) {
  size_t wanted = arena->used + arena->spill_bytes;
  bool spilled = arena->spills != NULL;
  free_spills(arena);
  arena->spill_bytes = 0;
  arena->used = 0;
  arena->failed = false;
  if (arena->cap > keep_max) {
    free(arena->base);
    arena->base = NULL;
    arena->cap = 0;
    return;
  }
  if (!spilled)
    return;
  if (wanted < ARENA_MIN_BLOCK)
    wanted = ARENA_MIN_BLOCK;
  if (wanted > keep_max)
    return; /* too big to keep: next message of this size spills again */
  unsigned char *grown = malloc(wanted);
  arena->system_allocs++;
  if (grown == NULL)
    return; /* keep the old block; the next round spills again */
  free(arena->base);
  arena->base = grown;
  arena->cap = wanted;
}

void ht_arena_release(ht_arena *arena) {
  free_spills(arena);
  free(arena->base);
  ht_arena_init(arena);
}
