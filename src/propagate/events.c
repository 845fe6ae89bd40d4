/* The installed event recorder (one atomic pointer to a static table).
 * Must never: own or free a table. */
#include <stdatomic.h>

#include "propagate/events.h"

static _Atomic(const ht_event_ops *) installed;

void ht_events_install(const ht_event_ops *ops) {
  atomic_store_explicit(&installed, ops, memory_order_release);
}

const ht_event_ops *ht_events_current(void) {
  return atomic_load_explicit(&installed, memory_order_acquire);
}
