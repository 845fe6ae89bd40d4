/* The benchmarks' client/server messenger pair (bench_pair.h). */
#include "bench_pair.h"

#include <stdio.h>
#include <stdlib.h>

#include "hoptrace/error.h"
#include "hoptrace/sampler.h"
#include "hoptrace/traced.h"

static void on_echo(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg;
  ht_payload p = {msg->payload, msg->payload_len, NULL, NULL};
  ht_request_reply(req, 0, &p);
}

/* The echo, with what a storage handler adds to its span: one integer
 * key-value (the size), as Blkin's hop has. */
static void on_echo_kv(void *arg, ht_request *req, const ht_envelope *msg) {
  ht_request_kv_int(req, "size", (int64_t)msg->payload_len);
  on_echo(arg, req, msg);
}

static void check(int rc, const char *what) {
  if (rc != 0) {
    fprintf(stderr, "bench: %s: %s\n", what, ht_strerror(rc));
    exit(1);
  }
}

static ht_messenger *make(int traced, const char *name) {
  ht_messenger_options o;
  ht_messenger_options_init(&o);
  o.flavour = traced ? HT_MESSENGER_TRACED : HT_MESSENGER_PLAIN;
  o.name = name;
  ht_messenger *m = NULL;
  check(ht_messenger_new(&o, &m), "messenger");
  return m;
}

void bench_pair_open(bench_pair *pair, int traced, double ratio) {
  ht_sampling_config cfg;
  ht_sampling_config_default(&cfg);
  cfg.kind = HT_SAMPLER_RATIO; /* roots and remote contexts alike */
  cfg.ratio = ratio;
  check(ht_sampling_set(&cfg), "sampling");
  pair->server = make(traced, "bench-server");
  pair->client = make(traced, "bench-client");
  char url[128];
  check(ht_messenger_handle(pair->server, "echo", on_echo, NULL), "handle");
  check(ht_messenger_handle(pair->server, "echo_kv", on_echo_kv, NULL), "handle");
  check(ht_messenger_listen(pair->server, "tcp://127.0.0.1:0", url, sizeof(url)),
        "listen");
  check(ht_messenger_connect(pair->client, url, &pair->peer), "connect");
}

void bench_pair_close(bench_pair *pair) {
  ht_messenger_close(pair->client, 1000);
  ht_messenger_close(pair->server, 1000);
}
