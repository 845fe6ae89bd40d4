/* Flight mode's own memory: per-thread overwrite rings of fixed-size
 * records (a span side's words, a tag), written without a lock or a call
 * into LTTng, and searched by trace id when a trace is captured.
 *
 * Why not LTTng's overwrite channels, as flight mode used first: a
 * recorded messenger hop costs ~3,300 instructions above plain, ~1,850
 * of them lttng-ust's two events (bench/recording, callgrind); a
 * prototype writing the span sides here instead measured flight mode at
 * 95.3 % of plain in bench/sim against 90.7 % (CPU +2.4 us an operation
 * instead of +7.1). Used in memory mode (flight_memory.h): span sides
 * here, written as LTTng events only for a captured trace.
 *
 * Each thread writes its own ring (allocated at its first record: slots
 * x 128 bytes); a thread that exits leaves its ring to the next new
 * thread. A reader (ht_fr_collect) copies each slot under its sequence
 * word (odd while written) and keeps only copies the writer did not
 * touch meanwhile: records are never torn, one being overwritten is
 * skipped. A fork's child reads none of the parent's records (they are
 * the parent's to replay) and its threads reuse the parent's rings.
 * Internal to libhoptrace. */
#ifndef HT_RECORDING_FLIGHT_RING_H
#define HT_RECORDING_FLIGHT_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Words of payload a record carries (a span side's rec: 12). */
#define HT_FR_WORDS 13

typedef struct ht_fr_record {
  uint64_t trace_hi, trace_lo; /* what ht_fr_collect searches by */
  uint32_t type;               /* the writer's kind of record */
  uint32_t n;                  /* payload words used, <= HT_FR_WORDS */
  uint64_t w[HT_FR_WORDS];
} ht_fr_record;

/* Slots of each ring, a power of two; 0 (the default) or below 64 keeps
 * 8,192 (1 MiB a thread). Takes effect for rings made after the call. */
void ht_fr_set_slots(uint32_t slots);

/* Copies r into the calling thread's ring, overwriting its oldest
 * record: all of r->w, the words past r->n too (the caller sets them:
 * a copy of fixed length is the cheaper one; readers get only n).
 * Returns 0, or HT_ENOMEM when the thread has no ring and none could be
 * made (the record is lost; ht_fr_lost counts it). r->n above
 * HT_FR_WORDS: HT_EINVAL. Any thread, a thread-exit destructor too;
 * lock-free (a thread's first record may allocate its ring). */
int ht_fr_write(const ht_fr_record *r);

/* Calls emit(record, arg) for each record of trace (hi, lo) the rings
 * hold, each once, in no particular order; returns how many. The record
 * passed is a copy, valid for the call. Any thread; takes no lock, so
 * writers and a fork are never held up by it. */
size_t ht_fr_collect(uint64_t hi, uint64_t lo,
                     void (*emit)(const ht_fr_record *r, void *arg), void *arg);

/* As ht_fr_collect, for every record whose trace want(hi, lo, arg)
 * accepts (called for each whole slot, under the same rules); emit gets
 * the same arg. */
size_t ht_fr_scan(bool (*want)(uint64_t hi, uint64_t lo, void *arg),
                  void (*emit)(const ht_fr_record *r, void *arg), void *arg);

/* As ht_fr_scan, but each record is passed to one take only, ever: one
 * taken is marked in its slot, and later takes skip it (ht_fr_scan and
 * ht_fr_collect still pass it). A record overwritten meanwhile is
 * skipped, as by a scan. */
size_t ht_fr_take(bool (*want)(uint64_t hi, uint64_t lo, void *arg),
                  void (*emit)(const ht_fr_record *r, void *arg), void *arg);

/* Records not written for want of memory. */
uint64_t ht_fr_lost(void);

/* Rings made so far (live threads' and released ones). */
size_t ht_fr_rings(void);

#endif /* HT_RECORDING_FLIGHT_RING_H */
