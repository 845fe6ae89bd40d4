/* HT_TLS_HOT marks the thread-local variables read for every message
 * (counters, ids, the current context, the epoch reader): initial-exec,
 * so libhoptrace.so reaches them as an executable does (%fs plus an
 * offset from the GOT) instead of calling __tls_get_addr at each access
 * (18 calls, about 200 instructions per request in the traced messenger).
 * The price is static TLS: a libhoptrace.so loaded by dlopen takes it
 * from glibc's surplus (512 bytes by default, shared with other
 * libraries, lttng-ust's among them), so what carries the mark stays
 * small (about 150 bytes); the name caches stay global-dynamic.
 * Internal to libhoptrace. */
#ifndef HT_COMMON_TLS_HOT_H
#define HT_COMMON_TLS_HOT_H

#define HT_TLS_HOT _Thread_local __attribute__((tls_model("initial-exec")))

/* HT_HOT_DATA marks the declarations of libhoptrace's own globals read
 * for every message (the published sampling words, the installed
 * recorder): hidden, so position-independent code loads them
 * PC-relative in one instruction instead of first loading their address
 * from the GOT (their definitions are hidden already: the build's
 * default visibility, which an extern declaration does not inherit). */
#define HT_HOT_DATA __attribute__((visibility("hidden")))

#endif /* HT_COMMON_TLS_HOT_H */
