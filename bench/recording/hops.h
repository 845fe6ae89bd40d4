/* The recorded hops bench_recording measures. Each runs `warm` hops
 * first (connection set-up, first events, lazy binding: not the cost of
 * a hop), then `n` hops with callgrind's instrumentation on, so that
 * callgrind --instr-atstart=no counts exactly those n (outside callgrind
 * the toggles are a few no-op instructions). */
#ifndef HT_BENCH_HOPS_H
#define HT_BENCH_HOPS_H

/* n two-sided hops through the span API (span_hop.c), each: a client
 * span (child of one sampled root), cs, the request's envelope encoded
 * with the client's context and decoded, the server span started from
 * the decoded context, sr, one integer key-value, ss, the server span
 * finished, cr, the client span finished. */
void hops_two_sided(unsigned warm, unsigned n);

/* n times the same envelope's encode and decode alone, no span: the
 * codec's share of a two-sided hop. */
void hops_codec(unsigned warm, unsigned n);

/* n requests and their replies, one at a time, between a client and a
 * server messenger (traced at sampling 100 %, or HT_BENCH_RATIO; or
 * plain); with kv, the
 * server's handler adds one integer key-value to its span. Exits on a
 * failed request. */
void hops_messenger(int traced, int kv, unsigned warm, unsigned n);

#endif
