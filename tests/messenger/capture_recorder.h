/* A recorder for the capture tests: keeps span sides and captures
 * (test_traced_capture, test_traced_capture_spread). */
#ifndef HT_TEST_CAPTURE_RECORDER_H
#define HT_TEST_CAPTURE_RECORDER_H

#include <stddef.h>

#include "hoptrace/span.h"
#include "propagate/events.h"

typedef struct side {
  ht_trace_context ctx;
  ht_span_kind kind;
  char name[64];
} side;

typedef struct capture {
  ht_trace_context ctx;
  ht_capture_note note;
  char origin[64];
} capture;

#define CAPTURES_MAX 256
extern side sides[CAPTURES_MAX];
extern capture captures[CAPTURES_MAX];
extern size_t n_sides, n_captures;
extern int captures_recorded; /* what the recorder says: a session records them */
extern const ht_event_ops capture_recorder;

void recorder_reset(void);
size_t recorder_count(size_t *n);
/* Waits (at most 5 s) until *counter reaches n. */
void recorder_wait(size_t *counter, size_t n);

#endif
