/* Decoded hop events packed into a flat block of bytes, so that a decoder
 * process can hand them to the assembling one through shared memory
 * (bt_parallel.c). A record is a hop_event copied by value whose string
 * and kv pointers are rewritten as offsets from the block's start (0 for
 * NULL), followed by the bytes they point to; event_block_get turns them
 * back into pointers, in place. Both sides are the same executable, so
 * the struct layout is shared. */
#ifndef HT_TOOL_EVENT_BLOCK_H
#define HT_TOOL_EVENT_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "read/event.h"

enum { EVENT_RECORD_EVENT = 1, EVENT_RECORD_DISCARDED = 2 };

/* A block: this header, then records back to back, 16-byte aligned. */
typedef struct event_block {
  uint32_t n_records;
  uint32_t used; /* bytes, header included */
} event_block;

typedef struct event_record {
  uint32_t size; /* bytes, header included, a multiple of 16 */
  uint32_t type; /* EVENT_RECORD_* */
  int64_t ts_ns; /* merge key: the event's time, a loss's begin time */
  /* EVENT_RECORD_DISCARDED */
  uint64_t count;
  int64_t end_ns;
} event_record;

/* Starts an empty block in cap bytes (cap >= sizeof(event_block)). */
void event_block_init(event_block *b);

/* Bytes a record for ev takes. */
size_t event_record_size(const hop_event *ev);

/* Appends ev to b (cap bytes in all): 0, or -1 when it does not fit. */
int event_block_put_event(event_block *b, size_t cap, const hop_event *ev);
/* Appends a loss: 0 or -1. Its record carries a hop_event holding only
 * the hostname, with `seq` the packets lost. */
int event_block_put_discarded(event_block *b, size_t cap, const hop_loss *loss);

/* The record at byte offset *at of b, advancing *at; NULL past the end
 * or on a record that does not fit its block. *ev points into the block
 * with its pointers restored (valid while the block is): the event, or
 * for a loss its host (event_block_loss). Call once per record: the
 * pointers are fixed in place. */
const event_record *event_block_next(event_block *b, uint32_t *at,
                                     const hop_event **ev);

/* A loss record and the hop_event event_block_next gave with it. */
hop_loss event_block_loss(const event_record *r, const hop_event *ev);

#endif
