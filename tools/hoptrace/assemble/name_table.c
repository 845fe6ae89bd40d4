/* Open-addressing hash set over text kept in append-only blocks. */
#include "assemble/name_table.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "read/text_hash.h"

#define BLOCK_BYTES ((size_t)64 << 10)

typedef struct text_block text_block;
struct text_block {
  text_block *next;
  size_t used;
  char text[BLOCK_BYTES];
};

typedef struct {
  uint64_t hash; /* 0: empty slot */
  const char *name;
} name_slot;

struct name_table {
  name_slot *slots;
  size_t cap, count, bytes;
  text_block *blocks;
};

name_table *name_table_new(void) { return calloc(1, sizeof(name_table)); }

void name_table_free(name_table *t) {
  if (t == NULL)
    return;
  while (t->blocks != NULL) {
    text_block *next = t->blocks->next;
    free(t->blocks);
    t->blocks = next;
  }
  free(t->slots);
  free(t);
}

static uint64_t hash_of(const char *s, size_t n) {
  return text_hash(s, n) | 1; /* never 0, the empty mark */
}

static int grow(name_table *t) {
  size_t cap = t->cap ? t->cap * 2 : 256;
  name_slot *slots = calloc(cap, sizeof(*slots));
  if (slots == NULL)
    return -1;
  for (size_t i = 0; i < t->cap; i++) {
    if (t->slots[i].hash == 0)
      continue;
    size_t j = t->slots[i].hash & (cap - 1);
    while (slots[j].hash != 0)
      j = (j + 1) & (cap - 1);
    slots[j] = t->slots[i];
  }
  free(t->slots);
  t->slots = slots;
  t->cap = cap;
  return 0;
}

static const char *store(name_table *t, const char *s, size_t n) {
  text_block *b = t->blocks;
  if (b == NULL || BLOCK_BYTES - b->used < n + 1) {
    b = malloc(sizeof(*b));
    if (b == NULL)
      return NULL;
    b->used = 0;
    b->next = t->blocks;
    t->blocks = b;
  }
  char *copy = b->text + b->used;
  memcpy(copy, s, n + 1);
  b->used += n + 1;
  t->bytes += n + 1;
  return copy;
}

const char *name_table_get(name_table *t, const char *s) {
  size_t n = strnlen(s, NAME_TABLE_MAX_LEN + 1);
  if (n > NAME_TABLE_MAX_LEN)
    return NULL;
  uint64_t h = hash_of(s, n);
  if (t->cap != 0) {
    for (size_t j = h & (t->cap - 1); t->slots[j].hash != 0; j = (j + 1) & (t->cap - 1))
      if (t->slots[j].hash == h && strcmp(t->slots[j].name, s) == 0)
        return t->slots[j].name;
  }
  if (t->count >= NAME_TABLE_MAX_NAMES || t->bytes + n + 1 > NAME_TABLE_MAX_BYTES)
    return NULL;
  if (2 * (t->count + 1) > t->cap && grow(t) != 0) /* at most half full */
    return NULL;
  const char *copy = store(t, s, n);
  if (copy == NULL)
    return NULL;
  size_t j = h & (t->cap - 1);
  while (t->slots[j].hash != 0)
    j = (j + 1) & (t->cap - 1);
  t->slots[j] = (name_slot){h, copy};
  t->count++;
  return copy;
}
