/* The recording benchmark's table: each row beside its goal and Blkin's
 * figure (measured here when run.sh could build Blkin, else quoted). */
#ifndef HT_BENCH_TABLE_H
#define HT_BENCH_TABLE_H

/* Reads the figures run.sh measured from `path` and writes the table to
 * stdout and bench/results/recording.txt. Lines of the file:
 *   # text                                  (copied as a note)
 *   blkin-commit HASH                       (Blkin was measured here)
 *   ROW MODE INSTR CLOCKS EVENTS BYTES DISCARDED LOST
 * ROW hop, codec, traced, traced_kv, plain or blkin, with ".so" appended
 * when run over libhoptrace.so; MODE rec (a session records the events)
 * or idle (the provider loaded, no session); INSTR user-space
 * instructions and CLOCKS clock reads per hop (absolute: the table
 * subtracts plain from the messenger rows); EVENTS and BYTES per hop,
 * DISCARDED events and LOST packets of the session, -1 where not
 * measured. Returns 0, or 1 when the file is unreadable. */
int table_write(const char *path);

#endif
