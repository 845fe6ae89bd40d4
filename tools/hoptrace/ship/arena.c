/* Batch memory (arena.h). */
#include "ship/arena.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK ((size_t)64 << 10)

struct arena_block {
  arena_block *next;
  size_t used, cap;
  max_align_t data[];
};

void *arena_alloc(arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  arena_block *b = a->head;
  if (b == NULL || b->cap - b->used < n) {
    size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
    b = malloc(sizeof(*b) + cap);
    if (b == NULL)
      return NULL;
    b->cap = cap;
    b->used = 0;
    b->next = a->head;
    a->head = b;
    a->bytes += sizeof(*b) + cap;
  }
  void *p = (char *)b->data + b->used;
  b->used += n;
  memset(p, 0, n);
  return p;
}

char *arena_strdup(arena *a, const char *s) {
  if (s == NULL)
    return NULL;
  size_t n = strlen(s) + 1;
  char *p = arena_alloc(a, n);
  if (p != NULL)
    memcpy(p, s, n);
  return p;
}

void arena_reset(arena *a) {
  while (a->head != NULL) {
    arena_block *next = a->head->next;
    free(a->head);
    a->head = next;
  }
  a->bytes = 0;
}
