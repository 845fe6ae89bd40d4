/* Decodes babeltrace2 event messages into hop_events, with the field
 * layout of each event class looked up once and cached. */
#ifndef HT_TOOL_BT_DECODE_H
#define HT_TOOL_BT_DECODE_H

#include <babeltrace2/babeltrace.h>

#include "read/event.h"

typedef struct bt_decoder bt_decoder;

bt_decoder *bt_decoder_new(void);
void bt_decoder_free(bt_decoder *decoder);

/* A name event (process, desc, peer) whose vpid field is not the vpid
 * context LTTng recorded with it: a process naming another's ids. */
#define BT_DECODE_FOREIGN_NAME (-2)

/* 1: *out is a hoptrace event (valid until the next call); 0: not a
 * hoptrace event; -1: a hoptrace event missing required fields or with
 * impossible values, a time past int64 ns among them (*out then a
 * HOP_MALFORMED event when its trace id was read, kind 0 and ids 0
 * otherwise; ts_ns 0 when its time was not read); BT_DECODE_FOREIGN_NAME. */
int bt_decoder_decode(bt_decoder *decoder, const bt_message *msg,
                      hop_event *out);

/* *ns: ns since the Unix epoch of a clock snapshot. 0, or -1 (*ns 0)
 * when there is none or its time does not fit int64 ns (a damaged or
 * hostile trace): the event then has no time, and is malformed. */
int bt_snapshot_ns(const bt_clock_snapshot *snapshot, int64_t *ns);

#endif
