/* A liblttng-ctl call that may wait forever (it blocks in recv on the
 * session daemon's socket, retrying on EINTR) run where it can be
 * abandoned: on a thread of its own, waited for at most a bound. */
#ifndef HT_TOOL_CTL_BOUNDED_H
#define HT_TOOL_CTL_BOUNDED_H

/* Runs fn(arg) on a new thread (every signal blocked there: SIGPIPE from
 * a write to a daemon gone becomes EPIPE) and waits at most ms for it.
 * 0: it returned within ms, its result in *rc. -1: it did not (or no
 * thread could be made: *rc untouched): the thread is left waiting,
 * detached, owning arg; if fn ever returns, late(arg, its result) runs
 * there to free what it made. Once a call is abandoned, the caller must
 * not use liblttng-ctl's client commands again (they share one socket). */
int ctl_bounded(int (*fn)(void *), void *arg, void (*late)(void *, int), int ms, int *rc);

#endif
