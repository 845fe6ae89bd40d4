/* Growing an array by doubling its capacity: the one idiom the tool's
 * lists share, its overflow checked once here. */
#ifndef HT_TOOL_GROW_H
#define HT_TOOL_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Makes the array *slot points to (any element type: the pointer moves
 * through memcpy, never through a void ** alias) hold at least need
 * elements of elem bytes: its capacity *cap (first when 0) doubles until
 * it does. Nothing changes on failure. 0, or -1 when out of memory or
 * when the capacity would pass SIZE_MAX or its bytes PTRDIFF_MAX. */
static inline int ht_grow(void *slot, size_t *cap, size_t need, size_t elem, size_t first) {
  if (need <= *cap)
    return 0;
  size_t n = *cap ? *cap : first ? first : 1, bytes;
  while (n < need)
    if (__builtin_mul_overflow(n, 2, &n))
      return -1;
  /* no object is larger than PTRDIFF_MAX (realloc would refuse it) */
  if (__builtin_mul_overflow(n, elem, &bytes) || bytes > PTRDIFF_MAX)
    return -1;
  void *p;
  memcpy(&p, slot, sizeof(p));
  void *q = realloc(p, bytes);
  if (q == NULL)
    return -1;
  memcpy(slot, &q, sizeof(q));
  *cap = n;
  return 0;
}

#endif
