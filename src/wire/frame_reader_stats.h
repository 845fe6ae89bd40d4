/* Counters of a frame reader for tests and benchmarks. Internal.
 * Must never: change what the reader does. */
#ifndef HT_WIRE_FRAME_READER_STATS_H
#define HT_WIRE_FRAME_READER_STATS_H

#include <stddef.h>

#include "hoptrace/wire.h"

/* malloc calls made by the reader so far (body buffer and scratch). */
size_t ht_wire_frame_reader_system_allocs(const ht_frame_reader *reader);

/* Bytes of the body buffer the reader holds now. */
size_t ht_wire_frame_reader_body_capacity(const ht_frame_reader *reader);

#endif
