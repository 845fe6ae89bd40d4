/* Timed waits on the monotonic clock, for the tool's worker threads (the
 * trace writer, the ship sender): a step of the wall clock back must not
 * stretch a short wait into minutes. */
#ifndef HT_TOOL_MONO_WAIT_H
#define HT_TOOL_MONO_WAIT_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* The monotonic clock's time ms milliseconds from now, as an absolute
 * deadline (for pthread_clockjoin_np and the waits below). */
void mono_deadline_ms(struct timespec *ts, int64_t ms);

/* pthread_cond_init with the monotonic clock; 0 or an errno. */
int mono_cond_init(pthread_cond_t *c);

/* pthread_cond_timedwait on c (made by mono_cond_init) for at most ms
 * milliseconds; m held, as for any wait. */
void mono_cond_wait_ms(pthread_cond_t *c, pthread_mutex_t *m, int64_t ms);

#endif
