/* USDT (SystemTap/DTrace sys/sdt.h) markers, provider "hoptrace", one per
 * LTTng event, each guarded by its semaphore so perf/bpftrace/SystemTap
 * attach cost nothing until a tool enables them. Without sys/sdt.h at
 * build time every macro compiles to nothing.
 * Must never: be included by more than one .c file (it defines the
 * semaphores). */
#ifndef HT_SHIM_USDT_H
#define HT_SHIM_USDT_H

#if defined(HT_HAVE_SDT)
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#define HT_USDT_SEMAPHORE(name)                                                \
  __attribute__((visibility("hidden"), used, section(".probes")))             \
  volatile unsigned short hoptrace_##name##_semaphore
#define HT_USDT_ENABLED(name) __builtin_expect(hoptrace_##name##_semaphore != 0, 0)
/* Every probe's semaphore is the one word: a span starting asks whether
 * any probe is attached with one load, not twelve (recorder.c
 * on_recording). The price, paid only while a tool is attached: every
 * probe builds its arguments, each probe itself is still a nop until
 * attached. */
#define HT_USDT_SEMAPHORE_SHARED(name)                                         \
  extern volatile unsigned short hoptrace_##name##_semaphore                  \
      __attribute__((alias("hoptrace_span_semaphore"), visibility("hidden")))
#define HT_USDT_ANY_ENABLED HT_USDT_ENABLED(span)
#else
#define HT_USDT_SEMAPHORE(name) static const unsigned short hoptrace_##name##_semaphore __attribute__((unused)) = 0
#define HT_USDT_ENABLED(name) 0
#define HT_USDT_SEMAPHORE_SHARED(name) HT_USDT_SEMAPHORE(name)
#define HT_USDT_ANY_ENABLED 0
#define STAP_PROBE5(p, n, a1, a2, a3, a4, a5) ((void)0)
#define STAP_PROBE6(p, n, a1, a2, a3, a4, a5, a6) ((void)0)
#define STAP_PROBE8(p, n, a1, a2, a3, a4, a5, a6, a7, a8) ((void)0)
#define STAP_PROBE9(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9) ((void)0)
#define STAP_PROBE10(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10) ((void)0)
#endif

/* a span side (schema 3): ids, kind, duration (tracer clock), status,
 * name, service, peer as text */
HT_USDT_SEMAPHORE(span);
HT_USDT_SEMAPHORE_SHARED(span_start);
HT_USDT_SEMAPHORE_SHARED(span_end);
HT_USDT_SEMAPHORE_SHARED(annotation);
HT_USDT_SEMAPHORE_SHARED(kv_str);
HT_USDT_SEMAPHORE_SHARED(kv_int);
HT_USDT_SEMAPHORE_SHARED(kvs);
HT_USDT_SEMAPHORE_SHARED(status);
HT_USDT_SEMAPHORE_SHARED(msg_send);
HT_USDT_SEMAPHORE_SHARED(msg_recv);
HT_USDT_SEMAPHORE_SHARED(hop_send);
HT_USDT_SEMAPHORE_SHARED(hop_recv);

#endif /* HT_SHIM_USDT_H */
