/* Chunk slabs: 2 MiB-aligned anonymous mappings, MADV_HUGEPAGE advised
 * (ignored where transparent huge pages are off; then plain pages).
 *
 * Once a pool has mapped FILLER_AFTER slabs, a helper thread faults the
 * next ones in ahead of need: the kernel zeroes every fresh page, and on
 * an export whose traces all stay open that zeroing was 12 % of the run,
 * on the reading thread. At most SPARE_SLABS slabs wait ready; the
 * reading thread never waits for the helper (it maps its own slab when
 * none is ready). */
#include "assemble/chunk_pool.h"

#include <pthread.h>
#include <stdbool.h>
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
  unsigned char *start; /* its SLAB_BYTES-aligned part */
};

#define FILLER_AFTER 2u /* slabs mapped before the filler starts */
#define SPARE_SLABS 2u

struct chunk_pool {
  trace_chunk *free; /* CHUNK_POOL_BYTES chunks ready for reuse */
  slab *slabs;
  unsigned char *carve, *carve_end; /* the newest slab's unused part */
  size_t n_slabs;
  /* the filler thread and the spare slabs it faulted in */
  pthread_t filler;
  bool filler_running, filler_stop;
  pthread_mutex_t lock;
  pthread_cond_t want; /* filler: a spare was taken, or stop */
  slab *spare;
  size_t n_spare;
};

chunk_pool *chunk_pool_new(void) {
  chunk_pool *pool = calloc(1, sizeof(chunk_pool));
  if (pool == NULL)
    return NULL;
  if (pthread_mutex_init(&pool->lock, NULL) != 0) {
    free(pool);
    return NULL;
  }
  if (pthread_cond_init(&pool->want, NULL) != 0) {
    pthread_mutex_destroy(&pool->lock);
    free(pool);
    return NULL;
  }
  return pool;
}

static void unmap_slabs(slab *s) {
  while (s != NULL) {
    slab *next = s->next;
    munmap(s->map, s->map_len);
    free(s);
    s = next;
  }
}

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
/* Maps one slab, aligned so that huge pages can back all of it; with
 * populate, faults all of it in now (the kernel zeroes it here). */
static slab *map_slab(bool populate) {
  slab *s = malloc(sizeof(*s));
  if (s == NULL)
    return NULL;
  s->next = NULL;
  s->map_len = SLAB_BYTES * 2;
  s->map = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (s->map == MAP_FAILED) {
    free(s);
    return NULL;
  }
  s->start = (unsigned char *)(((uintptr_t)s->map + SLAB_BYTES - 1) &
                               ~(uintptr_t)(SLAB_BYTES - 1));
  (void)madvise(s->start, SLAB_BYTES, MADV_HUGEPAGE);
  if (populate && madvise(s->start, SLAB_BYTES, MADV_POPULATE_WRITE) != 0) {
    for (size_t off = 0; off < SLAB_BYTES; off += 4096) /* before Linux 5.14 */
      ((volatile unsigned char *)s->start)[off] = 0;
  }
  return s;
}

static void *filler_main(void *arg) {
  chunk_pool *pool = arg;
  pthread_setname_np(pthread_self(), "hoptrace-fill");
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    while (!pool->filler_stop && pool->n_spare >= SPARE_SLABS)
      pthread_cond_wait(&pool->want, &pool->lock);
    if (pool->filler_stop)
      break;
    pthread_mutex_unlock(&pool->lock);
    slab *s = map_slab(true);
    pthread_mutex_lock(&pool->lock);
    if (s == NULL)
      break; /* out of memory: the reading thread maps its own */
    s->next = pool->spare;
    pool->spare = s;
    pool->n_spare++;
  }
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

/* A spare slab from the filler, or NULL when none is ready (never
 * waits). Starts the filler once the pool has mapped FILLER_AFTER. */
static slab *take_spare(chunk_pool *pool) {
  if (!pool->filler_running) {
    if (pool->n_slabs >= FILLER_AFTER &&
        pthread_create(&pool->filler, NULL, filler_main, pool) == 0)
      pool->filler_running = true;
    return NULL;
  }
  pthread_mutex_lock(&pool->lock);
  slab *s = pool->spare;
  if (s != NULL) {
    pool->spare = s->next;
    pool->n_spare--;
    pthread_cond_signal(&pool->want);
  }
  pthread_mutex_unlock(&pool->lock);
  return s;
}

static int add_slab(chunk_pool *pool) {
  slab *s = take_spare(pool);
  if (s == NULL && (s = map_slab(false)) == NULL)
    return -1;
  s->next = pool->slabs;
  pool->slabs = s;
  pool->n_slabs++;
  pool->carve = s->start;
  pool->carve_end = s->start + SLAB_BYTES;
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

static void stop_filler(chunk_pool *pool) {
  if (!pool->filler_running)
    return;
  pthread_mutex_lock(&pool->lock);
  pool->filler_stop = true;
  pthread_cond_signal(&pool->want);
  pthread_mutex_unlock(&pool->lock);
  pthread_join(pool->filler, NULL);
  pool->filler_running = false;
}

void chunk_pool_free(chunk_pool *pool) {
  if (pool == NULL)
    return;
  stop_filler(pool);
  drop_free_chunks(pool);
  unmap_slabs(pool->spare);
  unmap_slabs(pool->slabs);
  pthread_cond_destroy(&pool->want);
  pthread_mutex_destroy(&pool->lock);
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
