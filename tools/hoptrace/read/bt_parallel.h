/* Decoding a trace on several CPUs: one decoder process per group of
 * stream files (stream_split.h), each running its own babeltrace2 graph
 * and passing decoded events, packed (event_block.h), through shared
 * memory; the calling process merges them back into one time-ordered
 * sequence. Processes, not threads: libbabeltrace2 makes no promise for
 * graphs run concurrently in one process.
 *
 * Memory: DECODER_BLOCKS blocks of DECODER_BLOCK_BYTES per decoder; an
 * event too big for a block comes through the pipe on its own. */
#ifndef HT_TOOL_BT_PARALLEL_H
#define HT_TOOL_BT_PARALLEL_H

#include <stdatomic.h>
#include <stddef.h>

#include "read/bt_source.h"

#define DECODER_BLOCKS 8u
#define DECODER_BLOCK_BYTES ((size_t)1 << 20)

typedef struct bt_parallel bt_parallel;

/* Reads one input with one graph in this process (bt_graph.c). */
typedef int (*bt_read_fn)(const char *input, const bt_source_callbacks *cb,
                          void *user, bt_source_stats *stats,
                          atomic_int *stop, char *err,
                          size_t err_len);

/* Forks one decoder per input (n >= 2) running read on it. Call before
 * starting threads. NULL with a message in err. */
bt_parallel *bt_parallel_start(char *const *inputs, size_t n, bt_read_fn read,
                               char *err, size_t err_len);

/* Merges the decoders' events by time into the callbacks until all end
 * (or *stop, or a callback says stop). Sums the decoders' stats. 0, or
 * -1 with a message in err (a decoder failed or died). */
int bt_parallel_read(bt_parallel *p, const bt_source_callbacks *cb, void *user,
                     bt_source_stats *stats, atomic_int *stop,
                     char *err, size_t err_len);

/* Ends the decoders (killed if still running), reaps them, frees p. */
void bt_parallel_stop(bt_parallel *p);

#endif
