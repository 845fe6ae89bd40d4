/* Chunk slabs: 2 MiB-aligned anonymous mappings, MADV_HUGEPAGE advised
 * (ignored where transparent huge pages are off; then plain pages). */
#include "chunk_pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

/* Under AddressSanitizer every chunk is malloc'd, so that a write past a
 * chunk's end hits a redzone instead of the next chunk of a slab. */
#if defined(__SANITIZE_ADDRESS__)
#define HT_CHUNK_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HT_CHUNK_MALLOC 1
#endif
#endif

#define SLAB_BYTES ((size_t)2 << 20)
#define CHUNK_STRIDE (sizeof(trace_chunk) + CHUNK_POOL_BYTES)

typedef struct slab slab;
struct slab {
  slab *next;
  void *map; /* the mapping, SLAB_BYTES + alignment slack */
  size_t map_len;
};

struct chunk_pool {
  trace_chunk *free; /* CHUNK_POOL_BYTES chunks ready for reuse */
  slab *slabs;
  unsigned char *carve, *carve_end; /* the newest slab's unused part */
};

chunk_pool *chunk_pool_new(void) { return calloc(1, sizeof(chunk_pool)); }

#ifdef HT_CHUNK_MALLOC
static trace_chunk *carve_chunk(chunk_pool *pool) {
  (void)pool;
  trace_chunk *c = malloc(CHUNK_STRIDE);
  if (c != NULL)
    c->cap = CHUNK_POOL_BYTES;
  return c;
}

static void drop_free_chunks(chunk_pool *pool) {
  while (pool->free != NULL) {
    trace_chunk *next = pool->free->next;
    free(pool->free);
    pool->free = next;
  }
}
#else
/* Maps one slab, aligned so that huge pages can back all of it. */
static int add_slab(chunk_pool *pool) {
  slab *s = malloc(sizeof(*s));
  if (s == NULL)
    return -1;
  s->map_len = SLAB_BYTES * 2;
  s->map = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (s->map == MAP_FAILED) {
    free(s);
    return -1;
  }
  uintptr_t start = ((uintptr_t)s->map + SLAB_BYTES - 1) & ~(uintptr_t)(SLAB_BYTES - 1);
  (void)madvise((void *)start, SLAB_BYTES, MADV_HUGEPAGE);
  s->next = pool->slabs;
  pool->slabs = s;
  pool->carve = (unsigned char *)start;
  pool->carve_end = pool->carve + SLAB_BYTES;
  return 0;
}

static trace_chunk *carve_chunk(chunk_pool *pool) {
  if ((size_t)(pool->carve_end - pool->carve) < CHUNK_STRIDE &&
      add_slab(pool) != 0)
    return NULL;
  trace_chunk *c = (trace_chunk *)pool->carve;
  pool->carve += CHUNK_STRIDE;
  c->cap = CHUNK_POOL_BYTES;
  return c;
}

static void drop_free_chunks(chunk_pool *pool) { (void)pool; }
#endif

void chunk_pool_free(chunk_pool *pool) {
  if (pool == NULL)
    return;
  drop_free_chunks(pool);
  while (pool->slabs != NULL) {
    slab *next = pool->slabs->next;
    munmap(pool->slabs->map, pool->slabs->map_len);
    free(pool->slabs);
    pool->slabs = next;
  }
  free(pool);
}

trace_chunk *chunk_get(chunk_pool *pool, size_t need) {
  trace_chunk *c;
  if (need > CHUNK_POOL_BYTES) {
    c = malloc(sizeof(*c) + need);
    if (c == NULL)
      return NULL;
    c->cap = need;
  } else if (pool->free != NULL) {
    c = pool->free;
    pool->free = c->next;
  } else if ((c = carve_chunk(pool)) == NULL) {
    return NULL;
  }
  c->used = 0;
  c->next = NULL;
  return c;
}

void chunk_put(chunk_pool *pool, trace_chunk *c) {
  if (c->cap != CHUNK_POOL_BYTES) {
    free(c);
    return;
  }
  c->next = pool->free;
  pool->free = c;
}
