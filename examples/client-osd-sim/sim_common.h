/* What the osd and the client share: building the messenger of the chosen
 * flavour (with a clear message when this build lacks it), and the
 * sampling and control-socket options.
 *
 * Never: exit or abort; errors go back to main as values. */
#ifndef SIM_COMMON_H
#define SIM_COMMON_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "hoptrace/messenger.h"

struct uv_loop_s;

/* Options every process of the simulator takes (getopt long names). */
typedef struct sim_common_opts {
  const char *messenger;      /* --messenger plain|traced (NULL: env) */
  const char *sampler;        /* --sampler always|never|ratio|rate|parent */
  const char *sample_ratio;   /* --sample-ratio R (root ratio) */
  const char *control_socket; /* --control-socket PATH */
  const char *max_connections; /* --max-connections N (per listener) */
  const char *frame_timeout_ms; /* --frame-timeout-ms MS (slow senders) */
  const char *log_rate;       /* --log-rate N (lines a second per kind) */
} sim_common_opts;

#define SIM_COMMON_LONGOPTS                                   \
  {"messenger", required_argument, NULL, 0x1001},             \
      {"sampler", required_argument, NULL, 0x1002},           \
      {"sample-ratio", required_argument, NULL, 0x1003},      \
      {"control-socket", required_argument, NULL, 0x1004},    \
      {"max-connections", required_argument, NULL, 0x1005},   \
      {"frame-timeout-ms", required_argument, NULL, 0x1006},  \
      {"log-rate", required_argument, NULL, 0x1007}

#define SIM_COMMON_USAGE                                                      \
  "  --messenger plain|traced   messenger flavour (default: $HT_MESSENGER or plain)\n" \
  "  --sampler KIND             always|never|ratio|rate|parent (default: env)\n"  \
  "  --sample-ratio R           ratio of new traces recorded, 0..1\n"          \
  "  --control-socket PATH      runtime control socket (traced messenger)\n"    \
  "  --max-connections N        accepted connections per listener (default 1024)\n" \
  "  --frame-timeout-ms MS      close a connection whose frame is not whole MS\n"   \
  "                             after its first byte (default 30000)\n"   \
  "  --log-rate N               log lines a second per kind of message, then\n" \
  "                             one line with the count suppressed (default 10;\n" \
  "                             0: no limit)\n"

/* The log of a simulator process: the messenger's warnings and the
 * process's own, at most `per_sec` lines a second per kind of message
 * (a kind: the level and the text with its digits removed, so one peer's
 * address or a count does not make a new kind). What is held back is
 * counted and reported as one line per kind,
 *   hoptrace[NAME] warn: N more like this suppressed in S s: LAST
 * once that kind's second is over (sim_log_flush) or at the end
 * (sim_log_finish). Any thread. Never: block on anything but its lock. */
#define SIM_LOG_KINDS 32
#define SIM_LOG_TEXT 200
typedef struct sim_log_kind {
  uint64_t hash;       /* 0: unused */
  uint64_t window_ns;  /* start of this kind's current second */
  uint32_t lines;      /* printed in this second */
  uint64_t suppressed; /* held back in this second */
  int level;
  char last[SIM_LOG_TEXT]; /* the last message held back */
} sim_log_kind;

typedef struct sim_log {
  pthread_mutex_t lock;
  char name[32];
  uint32_t per_sec; /* 0: no limit */
  uint64_t suppressed_total;
  sim_log_kind kinds[SIM_LOG_KINDS];
} sim_log;

/* Prepares *l for NAME with the limit of --log-rate (default 10). 0, or
 * -1 with a message (a bad --log-rate). */
int sim_log_init(sim_log *l, const sim_common_opts *o, const char *name);

/* Logs one line "hoptrace[NAME] LEVEL: MSG" unless its kind is over the
 * limit (then counts it). An ht_log_fn: arg is the sim_log. */
void sim_log_line(void *arg, ht_log_level level, const char *msg);

/* Formats like printf, then sim_log_line at `level`. */
void sim_log_printf(sim_log *l, ht_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Reports the kinds whose second is over and that held lines back. */
void sim_log_flush(sim_log *l);

/* Reports every count still held back and releases the lock; after the
 * messenger is closed (nothing logs any more). */
void sim_log_finish(sim_log *l);

/* 1 when c was one of the common options (stored in o), else 0. */
int sim_common_option(sim_common_opts *o, int c, const char *arg);

/* Applies sampling options and the control socket (before the messenger
 * is built). 0, or -1 with a message printed. */
int sim_common_apply(const sim_common_opts *o, const char *who);

/* Blocks SIGTERM and SIGINT in the calling thread, and so in every thread
 * it starts from then on (main then takes them with sigwait or
 * sigtimedwait on *stop), and ignores SIGPIPE. */
void sim_block_stop_signals(sigset_t *stop);

/* Builds the messenger; loop NULL means its own thread; it logs through
 * `log` (sim_log_init'ed, outlives the messenger). 0, or -1 with a
 * message printed. */
int sim_messenger_create(ht_messenger **out, const sim_common_opts *o,
                         const char *name, struct uv_loop_s *loop,
                         uint32_t timeout_ms, sim_log *log);

/* Strict option parsing: the whole of s is a decimal number (a double:
 * finite, never nan) in [lo, hi]. 0, or -1 with a message naming the
 * option ("WHO: --OPT must be ..."). */
int sim_parse_long(const char *who, const char *opt, const char *s, long lo, long hi,
                   long *out);
int sim_parse_double(const char *who, const char *opt, const char *s, double lo, double hi,
                     double *out);

/* Prints why ht_messenger_listen(url) failed with rc: for a TCP address,
 * the bind's own errno (EADDRINUSE: "address already in use"), which the
 * messenger reports as HT_EIO. */
void sim_listen_error(const char *name, const char *url, int rc);

/* Prints "SIM-CPU NAME pid=P user_us=U sys_us=S vcsw=V ivcsw=I" on
 * stderr: this process's CPU time and context switches so far, every
 * thread (getrusage). Called last, after
 * the messenger is closed, so that bench/sim can charge each process its
 * whole cost without racing its exit. */
void sim_report_cpu(const char *name);

#endif
