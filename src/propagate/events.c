/* The installed event recorder (one atomic pointer to a static table).
 * Must never: own or free a table. */
#include <stdatomic.h>

#include "propagate/events.h"

_Atomic(const ht_event_ops *) ht_events_installed_;

void ht_events_install(const ht_event_ops *ops) {
  atomic_store_explicit(&ht_events_installed_, ops, memory_order_release);
}
