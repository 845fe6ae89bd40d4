/* Open-addressing hash map from a pair of 64-bit keys to a pointer. */
#ifndef HT_TOOL_IDMAP_H
#define HT_TOOL_IDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct idmap_slot {
  uint64_t a, b;
  void *value; /* NULL: empty */
  int tombstone;
} idmap_slot;

typedef struct idmap {
  idmap_slot *slots;
  size_t cap, used, live;
} idmap;

void *idmap_get(const idmap *m, uint64_t a, uint64_t b);
/* 0, or -1 when out of memory. value must not be NULL. */
int idmap_put(idmap *m, uint64_t a, uint64_t b, void *value);
void idmap_remove(idmap *m, uint64_t a, uint64_t b);
void idmap_free(idmap *m);

#endif
