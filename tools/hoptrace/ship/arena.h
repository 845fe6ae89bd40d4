/* A batch's memory: bump allocation from 64 KiB blocks, all freed at
 * once when the batch has been sent. */
#ifndef HT_SHIP_ARENA_H
#define HT_SHIP_ARENA_H

#include <stddef.h>

typedef struct arena_block arena_block;
typedef struct arena {
  arena_block *head;
  size_t bytes; /* held, for the batch's byte limit */
} arena;

/* Zeroed memory, or NULL when out of memory. */
void *arena_alloc(arena *a, size_t n);
/* A copy of s (NULL stays NULL); NULL also when out of memory. */
char *arena_strdup(arena *a, const char *s);
void arena_reset(arena *a);

#endif
