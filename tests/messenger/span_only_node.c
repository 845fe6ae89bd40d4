/* A traced server whose handler adds one integer key-value, and a client
 * making N requests to it, one at a time, in one process (loopback): the
 * workload of span_only_session.sh. usage: ht_span_only N */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hoptrace/messenger.h"
#include "hoptrace/sampler.h"
#include "hoptrace/tracing.h"
#include "hoptrace/traced.h"

static int replied;

static void on_kv(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  ht_request_kv_int(req, "bytes", 4096);
  ht_request_reply(req, 0, NULL);
}

static void on_reply(void *arg, int status, const ht_envelope *reply) {
  (void)arg, (void)reply;
  if (status == 0)
    __atomic_add_fetch(&replied, 1, __ATOMIC_SEQ_CST);
}

static ht_messenger *traced(const char *name) {
  ht_messenger_options o;
  ht_messenger_options_init(&o);
  o.flavour = HT_MESSENGER_TRACED;
  o.name = name;
  ht_messenger *m = NULL;
  if (ht_messenger_new(&o, &m) != 0)
    exit(1);
  return m;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10;
  ht_tracing_init();
  ht_sampling_config cfg;
  ht_sampling_config_default(&cfg); /* roots always */
  if (ht_sampling_set(&cfg) != 0)
    return 1;
  ht_messenger *server = traced("span-only-server"), *client = traced("span-only-client");
  char url[128];
  ht_peer *peer = NULL;
  if (ht_messenger_listen(server, "tcp://127.0.0.1:0", url, sizeof(url)) != 0 ||
      ht_messenger_handle(server, "kv", on_kv, NULL) != 0 ||
      ht_messenger_connect(client, url, &peer) != 0)
    return 1;
  for (int i = 0; i < n; i++) {
    if (ht_peer_request(peer, "kv", NULL, NULL, on_reply, NULL) != 0)
      return 1;
    for (int t = 0; t < 1000 && __atomic_load_n(&replied, __ATOMIC_SEQ_CST) <= i; t++)
      usleep(5000); /* a bound, not a timing: 5 s a request */
  }
  int got = __atomic_load_n(&replied, __ATOMIC_SEQ_CST);
  ht_messenger_close(client, 1000);
  ht_messenger_close(server, 1000);
  printf("replied=%d\n", got);
  return got == n ? 0 : 1;
}
