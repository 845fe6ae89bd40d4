/* Linear-probing map keyed by (a, b); grows at 50% load (tombstones
 * count), so lookups stay short whatever the churn. */
#include "assemble/idmap.h"

#include <stdlib.h>

static size_t hash(uint64_t a, uint64_t b) {
  uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return (size_t)(h ^ (h >> 32));
}

static idmap_slot *find(const idmap *m, uint64_t a, uint64_t b, int for_insert) {
  if (m->cap == 0)
    return NULL;
  size_t mask = m->cap - 1, i = hash(a, b) & mask;
  idmap_slot *first_free = NULL;
  for (;;) {
    idmap_slot *s = &m->slots[i];
    if (s->value == NULL && !s->tombstone)
      return for_insert ? (first_free ? first_free : s) : NULL;
    if (s->value == NULL && first_free == NULL)
      first_free = s;
    if (s->value != NULL && s->a == a && s->b == b)
      return s;
    i = (i + 1) & mask;
  }
}

void *idmap_get(const idmap *m, uint64_t a, uint64_t b) {
  idmap_slot *s = find(m, a, b, 0);
  return s != NULL ? s->value : NULL;
}

static int grow(idmap *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  if (m->live * 4 < m->cap)
    cap = m->cap; /* mostly tombstones: rehash in place size */
  idmap fresh = {calloc(cap, sizeof(idmap_slot)), cap, 0, 0};
  if (fresh.slots == NULL)
    return -1;
  for (size_t i = 0; i < m->cap; i++)
    if (m->slots[i].value != NULL) {
      idmap_slot *s = find(&fresh, m->slots[i].a, m->slots[i].b, 1);
      *s = m->slots[i];
      fresh.used++;
      fresh.live++;
    }
  free(m->slots);
  *m = fresh;
  return 0;
}

int idmap_put(idmap *m, uint64_t a, uint64_t b, void *value) {
  if ((m->used + 1) * 2 > m->cap && grow(m) != 0)
    return -1;
  idmap_slot *s = find(m, a, b, 1);
  if (s->value == NULL) {
    if (!s->tombstone)
      m->used++;
    m->live++;
  }
  *s = (idmap_slot){a, b, value, 0};
  return 0;
}

void idmap_remove(idmap *m, uint64_t a, uint64_t b) {
  idmap_slot *s = find(m, a, b, 0);
  if (s == NULL)
    return;
  s->value = NULL;
  s->tombstone = 1;
  m->live--;
}

void idmap_free(idmap *m) {
  free(m->slots);
  *m = (idmap){0};
}
