/* When to try a failed POST again: which replies are worth it, the
 * back-off between attempts (exponential, with jitter so that many
 * exporters do not retry in step) and the server's Retry-After. */
#ifndef HT_SHIP_RETRY_H
#define HT_SHIP_RETRY_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define RETRY_FIRST_MS 500     /* the first wait, before jitter */
#define RETRY_MAX_WAIT_MS 8000 /* no single wait longer (but Retry-After) */
#define RETRY_ATTEMPTS 10      /* posts of one batch at most */
#define RETRY_FOR_MS 60000     /* nor retried beyond this since its first post */

/* status 0 is no reply (connection refused, reset, timed out). */
bool retry_worth(long status);
/* The wait before attempt n + 1 (n >= 1 failed so far): RETRY_FIRST_MS *
 * 2^(n-1), capped at RETRY_MAX_WAIT_MS, times a uniform factor in
 * [0.5, 1.5). *seed is the caller's rand_r state. */
int64_t retry_backoff_ms(int n, unsigned *seed);
/* Retry-After's value (RFC 9110: delay-seconds or an HTTP-date) as ms
 * from now (a date in the past: 0); -1 when absent or unparsable. */
int64_t retry_after_ms(const char *value, time_t now);

#endif
