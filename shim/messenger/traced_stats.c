/* ht_traced_get_stats: the traced messengers' message counters, read
 * from the process-wide counters (src/common/counters.c). */
#include "common/counters.h"
#include "hoptrace/traced.h"

void ht_traced_get_stats(ht_traced_stats *out) {
  if (out == NULL)
    return;
  uint64_t v[HT_CTR_REQUESTS_FAILED - HT_CTR_MSGS_SENT + 1];
  ht_counters_read(HT_CTR_MSGS_SENT, (int)(sizeof(v) / sizeof(v[0])), v);
  out->msgs_sent = v[HT_CTR_MSGS_SENT - HT_CTR_MSGS_SENT];
  out->msgs_received = v[HT_CTR_MSGS_RECEIVED - HT_CTR_MSGS_SENT];
  out->bytes_sent = v[HT_CTR_BYTES_SENT - HT_CTR_MSGS_SENT];
  out->bytes_received = v[HT_CTR_BYTES_RECEIVED - HT_CTR_MSGS_SENT];
  out->msgs_sent_sampled = v[HT_CTR_MSGS_SENT_SAMPLED - HT_CTR_MSGS_SENT];
  out->msgs_received_sampled =
      v[HT_CTR_MSGS_RECEIVED_SAMPLED - HT_CTR_MSGS_SENT];
  out->requests_failed = v[HT_CTR_REQUESTS_FAILED - HT_CTR_MSGS_SENT];
}
