/* A watchdog for a live graph (bt_graph.c): babeltrace2's lttng-live
 * source blocks in recv() on a relay that stopped answering (SIGSTOP, a
 * hung host, a cut network), where neither the run's stop flag nor a
 * signal reached it. A thread of its own looks every 100 ms. When the
 * graph's thread has been inside babeltrace2 for LIVE_STALL_MS without
 * coming back, the relay is taken for stalled; when the stop flag is
 * set, the graph's interrupter is set and the graph's thread gets a
 * signal (SIGUSR2, caught without SA_RESTART: its recv() fails with
 * EINTR and lttng-live sees the interrupter). Either way, when the
 * graph's thread still waits LIVE_CUT_MS later (lttng-live 2.0 does not
 * look at the interrupter in every wait, e.g. while detaching), this
 * process's connections to the relays' ports are shut down: its recv()
 * returns, the source fails, the run ends. */
#ifndef HT_TOOL_LIVE_WATCH_H
#define HT_TOOL_LIVE_WATCH_H

#include <babeltrace2/babeltrace.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* A relay answers a viewer's request at once (data, or "nothing yet"):
 * this long without an answer, it is taken for stalled. */
#define LIVE_STALL_MS 10000
#define LIVE_CUT_MS 500 /* stopping: the wait left to babeltrace2 */

typedef struct live_watch live_watch;

/* Watches the calling thread's work on graph, reading the live URLs
 * inputs (net://HOST[:PORT]/...: the relays' ports); stop: the run's
 * flag (may be NULL). NULL when out of memory (nothing is watched). */
live_watch *live_watch_start(bt_graph *graph, const char *const *inputs, size_t n_inputs,
                             atomic_int *stop);
/* The calling thread goes into babeltrace2 (a call that may wait on the
 * relay), or comes back to ours. NULL w: nothing. */
void live_watch_enter(live_watch *w);
void live_watch_leave(live_watch *w);
/* The relay was taken for stalled. */
bool live_watch_stalled(const live_watch *w);
/* Ends the thread; call after the graph is gone (its teardown may wait
 * on the relay too). */
void live_watch_stop(live_watch *w);

#endif
