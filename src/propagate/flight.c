/* Flight mode's switch (capture.h; read inline through span_path.h). */
#include "hoptrace/capture.h"
#include "propagate/span_path.h"

_Atomic uint32_t ht_flight_flag_;

int ht_flight_set(int on) {
  atomic_store_explicit(&ht_flight_flag_, on ? HT_FLAG_RECORDED : 0u,
                        memory_order_relaxed);
  return 0;
}

int ht_flight_enabled(void) { return ht_flight_flag() != 0; }
