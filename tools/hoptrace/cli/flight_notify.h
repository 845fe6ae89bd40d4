/* The flight recorder's trigger: an LTTng trigger of ours on the session
 * daemon (condition: a user-space event of the given name, action:
 * notify) and a notification channel subscribed to it (liblttng-ctl). */
#ifndef HT_TOOL_FLIGHT_NOTIFY_H
#define HT_TOOL_FLIGHT_NOTIFY_H

#include <stddef.h>

typedef struct fl_notify fl_notify;

/* Registers trigger `name` on `event` (e.g. hoptrace:capture) and
 * subscribes to it. NULL with the reason in err when it could not: the
 * trigger, if registered, is removed again. */
fl_notify *fl_notify_open(const char *name, const char *event, char *err, size_t cap);

/* Blocks for the next notification. 1: one of our trigger's; 0:
 * interrupted by a signal, or another trigger's; 2: the daemon said it
 * dropped notifications (this client read too slowly); -1: the channel
 * closed or failed (the daemon went away). */
int fl_notify_next(fl_notify *n);

/* What the tracers discarded of our trigger's notifications (an
 * application's notification pipe was full): the condition's error
 * counter, summed; -1 when the daemon could not say. Not while another
 * thread uses liblttng-ctl's client commands. */
long long fl_notify_tracer_discarded(fl_notify *n);

/* Unsubscribes, removes our trigger (only ours, by the object we
 * registered) and frees. */
void fl_notify_close(fl_notify *n);

#endif
