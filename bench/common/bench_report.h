/* Benchmark output: every line goes to stdout and to
 * bench/results/<name>.txt, which starts with the machine and commit the
 * figures come from. */
#ifndef HT_BENCH_REPORT_H
#define HT_BENCH_REPORT_H

#include <stdint.h>
#include <stdio.h>

typedef struct bench_report bench_report;

/* Opens bench/results/<name>.txt (under HT_SOURCE_DIR) and writes the
 * header. NULL if the file cannot be written (reason on stderr). */
bench_report *bench_report_open(const char *name);

/* printf to stdout and the file. */
void bench_report_line(bench_report *report, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Closes the file; prints its path. */
void bench_report_close(bench_report *report);

/* Monotonic nanoseconds. */
uint64_t bench_now_ns(void);

#endif
