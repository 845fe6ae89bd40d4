/* Fixed-size memory chunks for the assembler's traces, carved from large
 * slabs the kernel may back with transparent huge pages: a trace's first
 * touch of fresh memory then costs one page fault per 2 MiB instead of
 * one per 4 KiB (page faults were a third of an export's time).
 *
 * Chunks of CHUNK_POOL_BYTES come from the slabs and go back to a free
 * list for the next trace; the slabs are unmapped by chunk_pool_free
 * only, so the memory held is the peak of the chunks in use at once
 * (bounded by the traces open at once, never by the input's size),
 * plus at most two spare slabs a helper thread faults in ahead of need
 * (chunk_pool.c). Bigger requests are malloc'd and freed one by one.
 * A pool is used from one thread. */
#ifndef HT_TOOL_CHUNK_POOL_H
#define HT_TOOL_CHUNK_POOL_H

#include <stddef.h>

#define CHUNK_POOL_BYTES 1024u

typedef struct trace_chunk trace_chunk;
struct trace_chunk {
  trace_chunk *next;
  size_t cap, used;
  _Alignas(16) unsigned char data[];
};

typedef struct chunk_pool chunk_pool;

chunk_pool *chunk_pool_new(void);
/* Frees the pool and its slabs: every chunk from it becomes invalid. */
void chunk_pool_free(chunk_pool *pool);
/* A chunk with cap >= need, used = 0, next = NULL; NULL out of memory. */
trace_chunk *chunk_get(chunk_pool *pool, size_t need);
void chunk_put(chunk_pool *pool, trace_chunk *c);

#endif
