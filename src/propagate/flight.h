/* Flight mode (include/hoptrace/capture.h): whether every span this
 * process starts records in memory. Read inline by every span start (one
 * relaxed load); written by ht_flight_set. Internal to libhoptrace. */
#ifndef HT_PROPAGATE_FLIGHT_H
#define HT_PROPAGATE_FLIGHT_H

#include <stdatomic.h>
#include <stdint.h>

#include "hoptrace/context.h"
#include "common/tls_hot.h"

/* The flags under which a span records its events: kept, or recorded for
 * the flight recorder. */
#define HT_FLAG_RECORDS (HT_FLAG_SAMPLED | HT_FLAG_RECORDED)

/* HT_FLAG_RECORDED in flight mode, else 0. */
extern HT_HOT_DATA _Atomic uint32_t ht_flight_flag_;

static inline uint32_t ht_flight_flag(void) {
  return atomic_load_explicit(&ht_flight_flag_, memory_order_relaxed);
}

#endif /* HT_PROPAGATE_FLIGHT_H */
