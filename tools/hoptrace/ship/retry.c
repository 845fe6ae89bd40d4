/* Back-off and Retry-After (retry.h). */
#include "ship/retry.h"

#include <ctype.h>
#include <stdlib.h>

#include <curl/curl.h>

bool retry_worth(long status) {
  return status == 0 || status == 429 || status == 502 || status == 503 || status == 504;
}

int64_t retry_backoff_ms(int n, unsigned *seed) {
  int64_t wait = RETRY_FIRST_MS;
  for (int i = 1; i < n && wait < RETRY_MAX_WAIT_MS; i++)
    wait *= 2;
  if (wait > RETRY_MAX_WAIT_MS)
    wait = RETRY_MAX_WAIT_MS;
  double jitter = 0.5 + (double)rand_r(seed) / ((double)RAND_MAX + 1.0);
  return (int64_t)((double)wait * jitter);
}

int64_t retry_after_ms(const char *value, time_t now) {
  if (value == NULL)
    return -1;
  while (*value == ' ' || *value == '\t')
    value++;
  if (isdigit((unsigned char)*value)) {
    int64_t s = 0;
    const char *p = value;
    for (; isdigit((unsigned char)*p); p++)
      if ((s = s * 10 + (*p - '0')) > 86400)
        s = 86400; /* a day at most: the retry budget ends long before */
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
      p++;
    return *p ? -1 : s * 1000;
  }
  time_t at = curl_getdate(value, NULL);
  if (at == (time_t)-1)
    return -1;
  return at <= now ? 0 : (int64_t)(at - now) * 1000;
}
