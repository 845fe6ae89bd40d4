/* The three traced messengers of the capture-spread tests, on loopback:
 * client -> primary ("write") -> replica ("replica_write"), sampler
 * never, flight mode on, the capture recorder installed
 * (test_traced_capture_spread, test_traced_notice_bounds). */
#ifndef HT_TEST_CAPTURE_CHAIN_H
#define HT_TEST_CAPTURE_CHAIN_H

#include "hoptrace/messenger.h"

typedef struct chain {
  ht_messenger *client, *primary, *replica;
  ht_peer *to_primary, *to_replica;
  char primary_url[128], replica_url[128];
} chain;

/* Built and connected (cmocka asserts on failure); the handlers get c. */
chain *chain_start(ht_handler_fn on_primary, ht_handler_fn on_replica);
/* Closes and frees c; flight mode off, the recorder removed. */
void chain_stop(chain *c);

#endif /* HT_TEST_CAPTURE_CHAIN_H */
