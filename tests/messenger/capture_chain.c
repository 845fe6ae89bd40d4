/* The capture tests' chain (capture_chain.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "hoptrace/capture.h"
#include "hoptrace/sampler.h"
#include "hoptrace/tracing.h"

#include "capture_chain.h"
#include "capture_recorder.h"

static ht_messenger *traced(const char *name) {
  ht_messenger_options o;
  ht_messenger_options_init(&o);
  o.flavour = HT_MESSENGER_TRACED;
  o.name = name;
  o.request_timeout_ms = 3000;
  ht_messenger *m = NULL;
  assert_int_equal(ht_messenger_new(&o, &m), 0);
  return m;
}

chain *chain_start(ht_handler_fn on_primary, ht_handler_fn on_replica) {
  ht_tracing_init();
  ht_events_install(&capture_recorder);
  ht_sampling_config cfg;
  ht_sampling_config_default(&cfg);
  assert_int_equal(ht_sampling_config_set(&cfg, "sampler", "never"), 0);
  assert_int_equal(ht_sampling_set(&cfg), 0);
  ht_flight_set(1);
  chain *c = calloc(1, sizeof(*c));
  assert_non_null(c);
  c->client = traced("client");
  c->primary = traced("primary");
  c->replica = traced("replica");
  assert_int_equal(ht_messenger_listen(c->replica, "tcp://127.0.0.1:0", c->replica_url,
                                       sizeof(c->replica_url)), 0);
  assert_int_equal(ht_messenger_listen(c->primary, "tcp://127.0.0.1:0", c->primary_url,
                                       sizeof(c->primary_url)), 0);
  assert_int_equal(ht_messenger_handle(c->replica, "replica_write", on_replica, c), 0);
  assert_int_equal(ht_messenger_handle(c->primary, "write", on_primary, c), 0);
  assert_int_equal(ht_messenger_connect(c->primary, c->replica_url, &c->to_replica), 0);
  assert_int_equal(ht_messenger_connect(c->client, c->primary_url, &c->to_primary), 0);
  for (int i = 0; i < 300 && !(ht_peer_connected(c->to_primary) &&
                               ht_peer_connected(c->to_replica)); i++)
    usleep(10000);
  return c;
}

void chain_stop(chain *c) {
  assert_int_equal(ht_messenger_close(c->client, 1000), 0);
  assert_int_equal(ht_messenger_close(c->primary, 1000), 0);
  assert_int_equal(ht_messenger_close(c->replica, 1000), 0);
  free(c);
  ht_flight_set(0);
  ht_events_install(NULL);
}
