/* What the osd and the client share: building the messenger of the chosen
 * flavour (with a clear message when this build lacks it), and the
 * sampling and control-socket options.
 *
 * Never: exit or abort; errors go back to main as values. */
#ifndef SIM_COMMON_H
#define SIM_COMMON_H

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
} sim_common_opts;

#define SIM_COMMON_LONGOPTS                                   \
  {"messenger", required_argument, NULL, 0x1001},             \
      {"sampler", required_argument, NULL, 0x1002},           \
      {"sample-ratio", required_argument, NULL, 0x1003},      \
      {"control-socket", required_argument, NULL, 0x1004},    \
      {"max-connections", required_argument, NULL, 0x1005},   \
      {"frame-timeout-ms", required_argument, NULL, 0x1006}

#define SIM_COMMON_USAGE                                                      \
  "  --messenger plain|traced   messenger flavour (default: $HT_MESSENGER or plain)\n" \
  "  --sampler KIND             always|never|ratio|rate|parent (default: env)\n"  \
  "  --sample-ratio R           ratio of new traces recorded, 0..1\n"          \
  "  --control-socket PATH      runtime control socket (traced messenger)\n"    \
  "  --max-connections N        accepted connections per listener (default 1024)\n" \
  "  --frame-timeout-ms MS      close a connection whose frame is not whole MS\n"   \
  "                             after its first byte (default 30000)\n"

/* 1 when c was one of the common options (stored in o), else 0. */
int sim_common_option(sim_common_opts *o, int c, const char *arg);

/* Applies sampling options and the control socket (before the messenger
 * is built). 0, or -1 with a message printed. */
int sim_common_apply(const sim_common_opts *o, const char *who);

/* Builds the messenger; loop NULL means its own thread. 0, or -1 with a
 * message printed. */
int sim_messenger_create(ht_messenger **out, const sim_common_opts *o,
                         const char *name, struct uv_loop_s *loop,
                         uint32_t timeout_ms);

/* Prints "SIM-CPU NAME pid=P user_us=U sys_us=S" on stderr: this
 * process's CPU time so far, every thread (getrusage). Called last, after
 * the messenger is closed, so that bench/sim can charge each process its
 * whole cost without racing its exit. */
void sim_report_cpu(const char *name);

#endif
