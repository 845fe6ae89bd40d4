/* A fixed pool of worker threads running queued jobs in FIFO order: the
 * OSD's "disk". Handlers hand their disk work here, so replies leave from
 * a worker thread, not from the messenger's loop thread.
 *
 * Never: drop a queued job (sim_workers_free runs what is left first). */
#ifndef SIM_WORKERS_H
#define SIM_WORKERS_H

#include <stddef.h>

typedef struct sim_workers sim_workers;
typedef void (*sim_job_fn)(void *arg);

/* Starts n threads (n >= 1). 0, or -1. */
int sim_workers_new(sim_workers **out, unsigned n);

/* Queues fn(arg) (any thread). 0, or -1 (out of memory, or stopping). */
int sim_workers_submit(sim_workers *w, sim_job_fn fn, void *arg);

/* Jobs queued and not yet started. */
size_t sim_workers_backlog(sim_workers *w);

/* Runs the remaining jobs, joins the threads and frees the pool. */
void sim_workers_free(sim_workers *w);

#endif
