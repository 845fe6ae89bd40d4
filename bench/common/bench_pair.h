/* A client and a server messenger over loopback TCP, plain or traced,
 * the server answering operation "echo" with the request's payload, and
 * "echo_kv" likewise after adding one integer key-value to its span.
 * Shared by bench/messenger and bench/recording, so that both measure
 * the same pair. */
#ifndef HT_BENCH_PAIR_H
#define HT_BENCH_PAIR_H

#include "hoptrace/messenger.h"

typedef struct bench_pair {
  ht_messenger *server, *client;
  ht_peer *peer; /* the client's connection to the server */
} bench_pair;

/* Sets the process's sampling to `ratio` for roots and remote contexts
 * alike, then builds the pair, each messenger on its own loop thread.
 * Exits with a message on failure (a benchmark has nothing to fall back
 * to). */
void bench_pair_open(bench_pair *pair, int traced, double ratio);

/* Closes both messengers (1 s drain each). */
void bench_pair_close(bench_pair *pair);

#endif
