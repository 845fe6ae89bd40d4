/* Test workload for the hoptrace tool: records N traces shaped like a
 * replicated write (client -> primary -> `fanout` replicas) through the
 * public span API, and writes the spans it expects the tool to rebuild,
 * one line per span: "TRACE SPAN PARENT KIND SERVICE NAME".
 *
 *   trace_workload --traces N [--fanout K] [--pause-us U] [--expect FILE]
 *                  [--warm-up] [--op NAME] [--sampler [--forced K]]
 *                  [--errors K] [--timeouts K] [--facts FILE]
 *
 * --warm-up first records unexpected traces every 100 ms until SIGUSR1
 * arrives (60 s at most), so a live reader can show it is attached before
 * the expected traces begin.
 * --pause-us sleeps between traces (live tests); without it the traces
 * are recorded as fast as possible (loss tests).
 * --op names the client and primary spans (and is the "object" tag's
 * value) instead of osd_write: any bytes, as a hostile peer's request
 * would carry (the tool's outputs must stay valid UTF-8).
 * --sampler lets the process's sampler (HT_SAMPLE_RATIO, ...) decide each
 * root instead of forcing it, and --forced K forces the first K anyway,
 * named osd_read (recorded with probability 1); only recorded spans are
 * expected. --errors K: every K-th trace's osd.1 replica_write fails
 * (HT_EPEERERROR); --timeouts K: every K-th trace's call to osd.2 times
 * out (HT_ETIMEDOUT) with no server span. --facts FILE gets "issued N",
 * then "error TRACE" / "timeout TRACE" for each recorded one. Exit 0 on
 * success. */
#include <getopt.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hoptrace/error.h"
#include "hoptrace/span.h"
#include "hoptrace/tracing.h"

static FILE *expect, *facts;
static volatile sig_atomic_t go;
static const char *op = "osd_write";
static ht_sample_hint root_hint = HT_SAMPLE_YES;
static long forced, errors_every, timeouts_every;

static void on_go(int sig) {
  (void)sig;
  go = 1;
}


static int start(ht_span *s, const ht_span *parent, const ht_span_info *info) {
  int rc = parent ? ht_span_start_child(s, parent, info)
                  : ht_span_start_root(s, info, root_hint);
  if (rc == 0 && expect != NULL && ht_span_is_sampled(s))
    fprintf(expect, "%016" PRIx64 "%016" PRIx64 " %016" PRIx64 " %016" PRIx64 " %s %s %s\n",
            s->ctx.trace_id_hi, s->ctx.trace_id_lo, s->ctx.span_id,
            s->ctx.parent_span_id, ht_span_kind_name(info->kind), info->service, info->name);
  return rc;
}

/* A recorded trace's fact (error, timeout) for the checker. */
static void fact(const char *what, const ht_span *s) {
  if (facts != NULL && ht_span_is_sampled(s))
    fprintf(facts, "%s %016" PRIx64 "%016" PRIx64 "\n", what, s->ctx.trace_id_hi,
            s->ctx.trace_id_lo);
}

/* One replica write of the primary's, failed or timed out as asked. */
static int replica(const ht_span *primary, int r, int index) {
  char service[16], endpoint[40];
  snprintf(service, sizeof(service), "osd.%d", r + 1);
  snprintf(endpoint, sizeof(endpoint), "tcp://127.0.0.1:%d", 6801 + r);
  ht_span_info rc_info = {"osd_replicate", HT_SPAN_CLIENT, "osd.0", "tcp://127.0.0.1:6800"};
  ht_span_info rs_info = {"replica_write", HT_SPAN_SERVER, service, endpoint};
  ht_span rclient, rserver;
  ht_span_init(&rclient);
  ht_span_init(&rserver);
  if (start(&rclient, primary, &rc_info) != 0)
    return -1;
  ht_span_annotate(&rclient, HT_ANN_CLIENT_SEND);
  if (r == 1 && timeouts_every > 0 && index % timeouts_every == 0) {
    ht_span_set_error(&rclient, HT_ETIMEDOUT, "no reply from osd.2");
    fact("timeout", &rclient);
    ht_span_finish(&rclient);
    return 0;
  }
  if (start(&rserver, &rclient, &rs_info) != 0)
    return -1;
  ht_span_annotate(&rserver, HT_ANN_SERVER_RECV);
  ht_span_kv_int(&rserver, "journal_seq", index);
  if (r == 0 && errors_every > 0 && index % errors_every == 0) {
    ht_span_set_error(&rserver, HT_EPEERERROR, "journal full");
    fact("error", &rserver);
  }
  ht_span_annotate(&rserver, HT_ANN_SERVER_SEND);
  ht_span_finish(&rserver);
  ht_span_annotate(&rclient, HT_ANN_CLIENT_RECV);
  ht_span_finish(&rclient);
  return 0;
}

static int one_trace(int fanout, int index) {
  ht_span client, primary;
  ht_span_init(&client);
  ht_span_init(&primary);
  const char *name = index >= 0 && index < forced ? "osd_read" : op;
  ht_span_info ci = {name, HT_SPAN_CLIENT, "client", "tcp://127.0.0.1:7000"};
  ht_span_info pi = {name, HT_SPAN_SERVER, "osd.0", "tcp://127.0.0.1:6800"};
  ht_sample_hint hint = root_hint;
  if (index >= 0 && index < forced)
    root_hint = HT_SAMPLE_YES;
  int rc = start(&client, NULL, &ci);
  root_hint = hint;
  if (rc != 0)
    return -1;
  ht_span_annotate(&client, HT_ANN_CLIENT_SEND);
  ht_span_kv_str(&client, "object", strcmp(op, "osd_write") == 0 ? "rbd_data.42" : op);
  ht_span_msg_send(&client, HT_MSG_REQUEST, (uint64_t)index, 4096, "tcp://127.0.0.1:6800");
  if (start(&primary, &client, &pi) != 0)
    return -1;
  ht_span_annotate(&primary, HT_ANN_SERVER_RECV);
  ht_kv kvs[] = {{"pg", HT_KV_STR, "1.2f", 0}, {"bytes", HT_KV_INT, NULL, 4096}};
  ht_span_kvs(&primary, kvs, 2);
  for (int r = 0; r < fanout; r++)
    if (replica(&primary, r, index) != 0)
      return -1;
  ht_span_annotate(&primary, HT_ANN_SERVER_SEND);
  ht_span_finish(&primary);
  ht_span_annotate(&client, HT_ANN_CLIENT_RECV);
  ht_span_finish(&client);
  return 0;
}

static void warm_up(void) {
  struct sigaction sa = {.sa_handler = on_go};
  sigaction(SIGUSR1, &sa, NULL);
  FILE *saved = expect;
  expect = NULL; /* warm-up traces are not expected */
  for (int i = 0; i < 600 && !go; i++) {
    one_trace(0, -1);
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  expect = saved;
}

int main(int argc, char **argv) {
  long traces = 10, fanout = 2, pause_us = 0, warm = 0;
  const char *expect_path = NULL, *facts_path = NULL;
  static const struct option opts[] = {{"traces", required_argument, NULL, 't'},
                                       {"fanout", required_argument, NULL, 'f'},
                                       {"pause-us", required_argument, NULL, 'p'},
                                       {"expect", required_argument, NULL, 'e'},
                                       {"warm-up", no_argument, NULL, 'w'},
                                       {"op", required_argument, NULL, 'o'},
                                       {"sampler", no_argument, NULL, 's'},
                                       {"forced", required_argument, NULL, 'F'},
                                       {"errors", required_argument, NULL, 'E'},
                                       {"timeouts", required_argument, NULL, 'T'},
                                       {"facts", required_argument, NULL, 'a'},
                                       {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 't': traces = atol(optarg); break;
    case 'f': fanout = atol(optarg); break;
    case 'p': pause_us = atol(optarg); break;
    case 'e': expect_path = optarg; break;
    case 'w': warm = 1; break;
    case 'o': op = optarg; break;
    case 's': root_hint = HT_SAMPLE_DEFAULT; break;
    case 'F': forced = atol(optarg); break;
    case 'E': errors_every = atol(optarg); break;
    case 'T': timeouts_every = atol(optarg); break;
    case 'a': facts_path = optarg; break;
    default: return 2;
    }
  }
  ht_tracing_init();
  if (ht_tracing_provider_state() != HT_PROVIDER_LOADED) {
    fprintf(stderr, "trace_workload: provider not loaded: %s\n", ht_tracing_provider_error());
    return 3;
  }
  if (expect_path != NULL && (expect = fopen(expect_path, "w")) == NULL) {
    perror(expect_path);
    return 2;
  }
  if (facts_path != NULL && (facts = fopen(facts_path, "w")) == NULL) {
    perror(facts_path);
    return 2;
  }
  if (warm)
    warm_up();
  for (long i = 0; i < traces; i++) {
    if (one_trace((int)fanout, (int)i) != 0) {
      fprintf(stderr, "trace_workload: span start failed\n");
      return 1;
    }
    if (expect != NULL)
      fflush(expect); /* a live test looks for the ids as they come */
    if (pause_us > 0) {
      struct timespec ts = {pause_us / 1000000, (pause_us % 1000000) * 1000};
      nanosleep(&ts, NULL);
    }
  }
  if (expect != NULL)
    fclose(expect);
  if (facts != NULL) {
    fprintf(facts, "issued %ld\n", traces);
    fclose(facts);
  }
  return 0;
}
