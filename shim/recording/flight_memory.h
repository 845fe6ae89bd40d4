/* Flight mode in process memory (HT_FLIGHT=memory, capture.h): the
 * recorder keeps the span sides and key-values of recorded, unsampled
 * traces in per-thread rings (flight_ring.h) instead of LTTng events,
 * and writes a trace's records as LTTng events (span_r, tag_i, tag_s)
 * only when the trace is captured, then the capture event the host's
 * recorder snapshots on.
 *
 * Why: one LTTng event per span side or key-value is ~900 instructions
 * (bench/recording); a ring record is a copy. bench/sim, 5 interleaved
 * rounds: flight mode 95.5 % of plain throughput (paired median) against
 * 86.4 % with LTTng's rings, CPU +3.2 us an operation instead of +7.2.
 *
 * A capture does not scan the rings on the thread that fired it (a scan
 * reads every slot: 0.04-0.07 ms for 16,384, warm in cache): it is
 * queued for the replay thread (started at the first capture), which
 * scans at most every HT_FM_SCAN_GAP_MS for all the traces queued
 * meanwhile, writes their records, then their capture events. Each
 * record is replayed once (ht_fr_take): a trace captured again once it
 * is no longer recent (another trace took its place in the table, or
 * HT_FM_RECENT_NS went by) or by two threads at once gets only the
 * records written since, not its sides and key-values twice. A side or
 * key-value of a trace captured in the last HT_FM_RECENT_NS that comes
 * afterwards goes to LTTng at once (ht_fm_recent), so a snapshot taken
 * after the capture has it.
 * Internal to libhoptrace. */
#ifndef HT_RECORDING_FLIGHT_MEMORY_H
#define HT_RECORDING_FLIGHT_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "recording/flight_ring.h"

/* Slots of each thread's ring by default: 16,384 x 128 bytes = 2 MiB a
 * thread, 15 s of the demo's busiest process (an OSD: 1,062 records a
 * second at the demo's 750 requests a second). HT_FLIGHT_SLOTS sets it. */
#define HT_FM_DEFAULT_SLOTS 16384u
#define HT_FM_SCAN_GAP_MS 50
#define HT_FM_RECENT_NS 5000000000ull
/* A capture's origin (a service name) is cut to this many bytes. */
#define HT_FM_ORIGIN_MAX 127
/* Captures queued and not yet replayed, at most (past it a capture is
 * written at once, without its sides: ht_fm_stats.unreplayed). */
#define HT_FM_QUEUE 512

/* A ring record's type, and its words: the span side's rec words as
 * span_r wants them but the trace id (the record's own), its end, and
 * the desc and peer entries (intern.h) to name it with at replay. */
enum { HT_FM_SIDE = 1 };
enum {
  HT_FM_NAMES_VPID, HT_FM_VTID_FLAGS_STATUS, HT_FM_SPAN, HT_FM_PARENT, HT_FM_START,
  HT_FM_VALUE, HT_FM_KEY, HT_FM_END = HT_FM_KEY + 4, HT_FM_DESC, HT_FM_PEER,
  HT_FM_WORDS
};
_Static_assert(HT_FM_WORDS <= HT_FR_WORDS, "a side fits a ring record");

/* A key-value of a span (tag_i, tag_s): the span's ids but the trace's,
 * the integer, then the key and (tag_s) the value, each NUL-terminated,
 * in the words left; a longer pair is an event at once. */
enum { HT_FM_TAG_I = 2, HT_FM_TAG_S = 3 };
enum { HT_FM_TAG_SPAN, HT_FM_TAG_PARENT, HT_FM_TAG_VALUE, HT_FM_TAG_TEXT };
#define HT_FM_TAG_TEXT_BYTES (8 * (HT_FR_WORDS - HT_FM_TAG_TEXT))

/* The capture event's fields, kept until the replay. */
typedef struct ht_fm_capture {
  uint64_t trace_hi, trace_lo, span_id, threshold, value;
  uint8_t why, hops;
  bool replay; /* false: replayed already (captured lately) */
  char origin[HT_FM_ORIGIN_MAX + 1];
} ht_fm_capture;

typedef struct ht_fm_stats {
  uint64_t captures;   /* queued for the replay thread */
  uint64_t unreplayed; /* written at once: the queue was full, or no thread */
  uint64_t scans;      /* ring scans */
  uint64_t sides;      /* sides replayed */
  uint64_t tags;       /* key-values replayed */
} ht_fm_stats;

/* Non-zero in memory mode. */
extern int ht_fm_on_;
static inline bool ht_fm_on(void) { return __builtin_expect(ht_fm_on_ != 0, 0); }

/* Memory mode on, with rings of `slots` records a thread (0: the
 * default). Call before any span (the loader does, from the environment). */
void ht_fm_enable(uint32_t slots);

/* true when (hi, lo) was captured here in the last HT_FM_RECENT_NS
 * before now (tracer clock): its sides go to LTTng at once. Lock-free. */
bool ht_fm_recent(uint64_t hi, uint64_t lo, uint64_t now);

/* ht_fm_recent at the tracer clock's now, read only when this trace's
 * ids are in its slot of the recent table. */
bool ht_fm_recent_now(uint64_t hi, uint64_t lo);

/* Remembers c's trace as captured at now and queues c for the replay
 * thread. 0, or a negative error (HT_ENOSPC: queue full; HT_ENOMEM: no
 * thread): then the caller writes the capture event itself. Never
 * blocks but on a mutex the replay thread holds for a copy. */
int ht_fm_capture_later(ht_fm_capture *c, uint64_t now);

void ht_fm_stats_get(ht_fm_stats *out);

/* The recorder's (recorder.c), called on the replay thread: a batch
 * begins (its sides then write each name, and the process event, once),
 * a side record as a span_r event with its names, a key-value, and a
 * capture event. */
void ht_recorder_replay_begin(void);
void ht_recorder_replay_side(const ht_fr_record *r);
void ht_recorder_replay_tag(const ht_fr_record *r);
void ht_recorder_replay_capture(const ht_fm_capture *c);

#endif /* HT_RECORDING_FLIGHT_MEMORY_H */
