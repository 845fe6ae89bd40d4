/* The recording benchmark's table: Blkin's quoted figures beside the
 * measured ones, each hoptrace row against its goal. */
#ifndef HT_BENCH_TABLE_H
#define HT_BENCH_TABLE_H

/* Reads the figures run.sh measured from `path` and writes the table to
 * stdout and bench/results/recording.txt. Lines of the file:
 *   # text                                  (copied as a note)
 *   ROW CTX INSTR EVENTS BYTES DISCARDED LOST
 * ROW span, traced or plain; CTX 1 with the per-event contexts
 * `hoptrace record` adds, else 0; INSTR user-space instructions per hop
 * (absolute; the table subtracts plain from traced); EVENTS and BYTES
 * per hop, DISCARDED events and LOST packets of the session, -1 where
 * not measured. Returns 0, or 1 when the file is unreadable. */
int table_write(const char *path);

#endif
