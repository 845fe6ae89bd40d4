/* ht_traced_get_stats: the traced messengers' message counters, read
 * from the process-wide counters (src/common/counters.c). */
#include <stddef.h>

#include "common/counters.h"
#include "common/sized.h"
#include "hoptrace/error.h"
#include "hoptrace/traced.h"

int ht_traced_get_stats(ht_traced_stats *caller) {
  ht_traced_stats all = {.size = sizeof(all)}, *out = &all;
  uint64_t v[HT_CTR_CRUMB_PEERS_DROPPED - HT_CTR_MSGS_SENT + 1];
  ht_counters_read(HT_CTR_MSGS_SENT, (int)(sizeof(v) / sizeof(v[0])), v);
  out->msgs_sent = v[HT_CTR_MSGS_SENT - HT_CTR_MSGS_SENT];
  out->msgs_received = v[HT_CTR_MSGS_RECEIVED - HT_CTR_MSGS_SENT];
  out->bytes_sent = v[HT_CTR_BYTES_SENT - HT_CTR_MSGS_SENT];
  out->bytes_received = v[HT_CTR_BYTES_RECEIVED - HT_CTR_MSGS_SENT];
  out->msgs_sent_sampled = v[HT_CTR_MSGS_SENT_SAMPLED - HT_CTR_MSGS_SENT];
  out->msgs_received_sampled =
      v[HT_CTR_MSGS_RECEIVED_SAMPLED - HT_CTR_MSGS_SENT];
  out->requests_failed = v[HT_CTR_REQUESTS_FAILED - HT_CTR_MSGS_SENT];
  out->kvs_dropped = v[HT_CTR_KVS_DROPPED - HT_CTR_MSGS_SENT];
  out->kvs_truncated = v[HT_CTR_KVS_TRUNCATED - HT_CTR_MSGS_SENT];
  out->captures_fired = v[HT_CTR_CAPTURES_FIRED - HT_CTR_MSGS_SENT];
  out->captures_unrecorded = v[HT_CTR_CAPTURES_UNRECORDED - HT_CTR_MSGS_SENT];
  out->notices_sent = v[HT_CTR_NOTICES_SENT - HT_CTR_MSGS_SENT];
  out->notices_dropped = v[HT_CTR_NOTICES_DROPPED - HT_CTR_MSGS_SENT];
  out->notices_received = v[HT_CTR_NOTICES_RECEIVED - HT_CTR_MSGS_SENT];
  out->notices_refused = v[HT_CTR_NOTICES_REFUSED - HT_CTR_MSGS_SENT];
  out->captures_limited = v[HT_CTR_CAPTURES_LIMITED - HT_CTR_MSGS_SENT];
  out->crumb_peers_dropped = v[HT_CTR_CRUMB_PEERS_DROPPED - HT_CTR_MSGS_SENT];
  return ht_sized_copy_out(caller, &all, sizeof(all),
                           offsetof(ht_traced_stats, msgs_sent) +
                               sizeof(all.msgs_sent)) == 0
             ? 0
             : HT_EINVAL;
}
