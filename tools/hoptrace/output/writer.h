/* Writes traces on a thread of its own, so that formatting and writing
 * one trace overlaps reading and assembling the next (2 CPUs: the export
 * runs at the speed of the slower half instead of the sum).
 *
 * The reading thread submits each trace the assembler emits (kept by the
 * assembler: assembler_keep_traces) and gets written ones back through
 * writer_collect, to release them to the assembler, which is not shared
 * between threads. At most WRITER_QUEUE traces are in flight: submit
 * waits for the writer beyond that (memory stays bounded). */
#ifndef HT_TOOL_WRITER_H
#define HT_TOOL_WRITER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "output/output.h"

#define WRITER_QUEUE 1024u

typedef struct trace_writer trace_writer;
typedef void (*writer_release_fn)(void *arg, trace *t);

/* NULL when the thread cannot start (the caller then writes itself).
 * fmt->trace(out, t) runs on the writer's thread; with follow, buf is
 * flushed after each trace. Once *interrupt (the signal that ended the
 * run, caught without SA_RESTART) is set, nothing more is written, and
 * a write blocked on a reader that never reads is interrupted by
 * sending that signal to the writer's thread. */
trace_writer *writer_new(const output_format *fmt, output *out, obuf *buf,
                         bool follow, atomic_int *interrupt);
/* A write failed (e.g. EPIPE: the reader went away): the caller stops
 * reading; the rest is not written. Any thread. */
bool writer_failed(trace_writer *w);
/* Queues t (owned by the writer until collected). */
void writer_submit(trace_writer *w, trace *t, writer_release_fn release,
                   void *arg);
/* Hands every written trace to release(arg, t), on the calling thread. */
void writer_collect(trace_writer *w, writer_release_fn release, void *arg);
/* Writes what is queued, stops the thread, hands every trace back, frees
 * w. The output is then the caller's alone again. */
void writer_finish(trace_writer *w, writer_release_fn release, void *arg);

#endif
