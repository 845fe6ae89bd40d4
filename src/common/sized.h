/* Public structs that grow carry their size first (the caller's
 * sizeof): the library reads or writes only the part the caller knows.
 * Internal to libhoptrace. */
#ifndef HT_COMMON_SIZED_H
#define HT_COMMON_SIZED_H

#include <stddef.h>
#include <string.h>

/* Copies the library's complete struct `full` (full_size bytes, its own
 * size field first) into the caller's `out`, whose first member is the
 * caller's size: only the bytes that size covers, the size untouched.
 * -1 when out is NULL or knows less than min_size bytes. */
static inline int ht_sized_copy_out(void *out, const void *full,
                                    size_t full_size, size_t min_size) {
  if (out == NULL)
    return -1;
  size_t caller_size;
  memcpy(&caller_size, out, sizeof(caller_size));
  if (caller_size < min_size)
    return -1;
  size_t n = caller_size < full_size ? caller_size : full_size;
  memcpy((char *)out + sizeof(size_t), (const char *)full + sizeof(size_t),
         n - sizeof(size_t));
  return 0;
}

/* An init function's fill: the library's complete defaults `full`
 * (full_size bytes) into the caller's `out` of `size` bytes (the caller's
 * sizeof, which may be smaller or larger than the library's): never a
 * byte past size, bytes this library does not know zeroed, out's size set
 * to size. -1, out untouched, when out is NULL or size is below min_size
 * (which must be at least sizeof(size_t)). */
static inline int ht_sized_fill(void *out, size_t size, const void *full,
                                size_t full_size, size_t min_size) {
  if (out == NULL || size < min_size)
    return -1;
  size_t n = size < full_size ? size : full_size;
  memcpy(out, full, n);
  if (size > n)
    memset((char *)out + n, 0, size - n);
  memcpy(out, &size, sizeof(size));
  return 0;
}

#endif /* HT_COMMON_SIZED_H */
