/* Schemas 2 and 3 of the hoptrace provider
 * (src/provider/hoptrace_schema.h): span sides, and the per-process
 * tables (process, desc, peer) that name them. Event and field names come
 * from that header alone. Decoding
 * only: ids are resolved after the merge (names.h), since a table entry
 * and the span that uses it may sit in different streams. */
#ifndef HT_TOOL_SCHEMA2_H
#define HT_TOOL_SCHEMA2_H

#include <babeltrace2/babeltrace.h>

#include "read/event.h"

#define SCHEMA2_MAX_FIELDS 16

/* The event's index in the schema, or -1 when not one of its events. */
int schema2_event(const char *name);

/* The event to decode an event class named as `event` as (the same, or
 * the read-only older layout of that name whose fields the payload holds,
 * when it holds none of event's), and members[i]: the payload member
 * holding that event's i-th field, -1 when absent (the event is then
 * malformed). */
int schema2_map(int event, const bt_field_class *payload, int64_t *members);

/* The bytes of a span_k's key buffer (its NUL included). */
#define SCHEMA2_KEY_BYTES 32

/* Fills *out (context fields already set) from the payload, times by the
 * event's clock (its end ts_ns, and its start in that clock's cycles): a
 * span side
 * (HOP_SPAN_SIDE, ids unresolved) or a table entry (HOP_PROCESS,
 * HOP_DESC, HOP_PEER). 1, or -1 when malformed. Strings are borrowed
 * from the event, a span_k's key from key (SCHEMA2_KEY_BYTES, the
 * caller's, valid as long as it is). */
int schema2_decode(int event, const int64_t *members, const bt_field *payload,
                   const bt_clock_class *clock, int64_t ts_ns, char *key,
                   hop_event *out);

#endif
