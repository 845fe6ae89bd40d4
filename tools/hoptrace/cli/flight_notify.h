/* The flight recorder's trigger: an LTTng trigger of ours on the session
 * daemon (condition: a user-space event of the given name, action:
 * notify) and a notification channel subscribed to it (liblttng-ctl). */
#ifndef HT_TOOL_FLIGHT_NOTIFY_H
#define HT_TOOL_FLIGHT_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

typedef struct fl_notify fl_notify;

/* What a notification carries of the event that fired it (with
 * capture_fields, the trigger captures its fields `ids[0]`, `ids[1]` and
 * `why`; without, an event lacking them, or a tracer that could not
 * capture, they are unset). */
typedef struct fl_note {
  uint64_t trace_hi, trace_lo;
  unsigned why;
  int has_trace, has_why;
} fl_note;

/* Registers trigger `name` on `event` (e.g. hoptrace:capture) and
 * subscribes to it. NULL with the reason in err when it could not: the
 * trigger, if registered, is removed again. capture_fields: off by
 * default, as lttng-ust 2.13 never frees a capturing trigger's bytecode
 * in the traced processes (about 600 bytes each, reported at their exit
 * by LeakSanitizer). */
fl_notify *fl_notify_open(const char *name, const char *event, int capture_fields, char *err,
                          size_t cap);

/* Blocks for the next notification. 1: one of our trigger's (*note
 * filled); 0:
 * interrupted by a signal, or another trigger's; 2: the daemon said it
 * dropped notifications (this client read too slowly); -1: the channel
 * closed or failed (the daemon went away). */
int fl_notify_next(fl_notify *n, fl_note *note);

/* What the tracers discarded of our trigger's notifications (an
 * application's notification pipe was full): the condition's error
 * counter, summed; -1 when the daemon could not say. Not while another
 * thread uses liblttng-ctl's client commands. */
long long fl_notify_tracer_discarded(fl_notify *n);

/* Unsubscribes, removes our trigger (only ours, by the object we
 * registered) and frees. */
void fl_notify_close(fl_notify *n);

/* Frees without a word to the daemon (one that does not answer): the
 * trigger stays registered there. */
void fl_notify_abandon(fl_notify *n);

/* fl_notify_open on a thread waited for at most ms (ctl_bounded.h). NULL
 * when it failed (said on stderr) or, *stalled set, when the daemon did
 * not answer in time: the call is left waiting, the trigger may remain
 * registered, liblttng-ctl must not be used again. */
fl_notify *fl_notify_open_bounded(const char *name, const char *event, int trace_ids, int ms,
                                  int *stalled);

/* fl_notify_tracer_discarded (into *discarded, -1 when unknown), then
 * fl_notify_close, on a thread waited for at most ms. 0, or -1 when the
 * daemon did not answer in time (said; the trigger may remain; n is the
 * waiting thread's, liblttng-ctl must not be used again). */
int fl_notify_close_bounded(fl_notify *n, int ms, long long *discarded);

#endif
