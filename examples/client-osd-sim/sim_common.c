/* Messenger construction and sampling options shared by the simulator's
 * programs (see sim_common.h). Never: exit; keep any global state. */
#include "sim_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hoptrace/error.h"
#include "hoptrace/sampler.h"

int sim_common_option(sim_common_opts *o, int c, const char *arg) {
  switch (c) {
  case 0x1001: o->messenger = arg; return 1;
  case 0x1002: o->sampler = arg; return 1;
  case 0x1003: o->sample_ratio = arg; return 1;
  case 0x1004: o->control_socket = arg; return 1;
  case 0x1005: o->max_connections = arg; return 1;
  case 0x1006: o->frame_timeout_ms = arg; return 1;
  default: return 0;
  }
}

int sim_common_apply(const sim_common_opts *o, const char *who) {
  if (o->control_socket != NULL && setenv("HT_CONTROL_SOCKET", o->control_socket, 1) != 0)
    return -1;
  if (o->sampler == NULL && o->sample_ratio == NULL)
    return 0; /* the environment decides (HT_SAMPLER, HT_SAMPLE_RATIO...) */
  ht_sampling_config cfg;
  ht_sampling_config_from_env(&cfg, NULL);
  int rc = 0;
  if (o->sampler != NULL)
    rc = ht_sampling_config_set(&cfg, "sampler", o->sampler);
  if (rc == 0 && o->sample_ratio != NULL) {
    /* a ratio alone: PARENT keeps following callers, new roots by ratio */
    if (cfg.kind == HT_SAMPLER_PARENT)
      rc = ht_sampling_config_set(&cfg, "root", "ratio");
    if (rc == 0)
      rc = ht_sampling_config_set(&cfg, "ratio", o->sample_ratio);
  }
  if (rc == 0)
    rc = ht_sampling_set(&cfg);
  if (rc != 0)
    fprintf(stderr, "%s: bad sampling option: %s\n", who, ht_strerror(rc));
  return rc == 0 ? 0 : -1;
}

/* A decimal number in [lo, hi] into *out; 0, or -1 with a message. */
static int parse_bounded(const char *who, const char *opt, const char *s, unsigned long lo,
                         unsigned long hi, uint32_t *out) {
  char *end;
  unsigned long n = strtoul(s, &end, 10);
  if (*s == '\0' || *end != '\0' || n < lo || n > hi) {
    fprintf(stderr, "%s: --%s must be %lu..%lu\n", who, opt, lo, hi);
    return -1;
  }
  *out = (uint32_t)n;
  return 0;
}

static int parse_flavour(const char *s, ht_messenger_flavour *f) {
  if (s == NULL)
    *f = HT_MESSENGER_DEFAULT;
  else if (strcmp(s, "plain") == 0)
    *f = HT_MESSENGER_PLAIN;
  else if (strcmp(s, "traced") == 0)
    *f = HT_MESSENGER_TRACED;
  else
    return -1;
  return 0;
}

int sim_messenger_create(ht_messenger **out, const sim_common_opts *o, const char *name,
                         struct uv_loop_s *loop, uint32_t timeout_ms) {
  ht_messenger_options mo;
  ht_messenger_options_init(&mo);
  if (parse_flavour(o->messenger, &mo.flavour) != 0) {
    fprintf(stderr, "%s: --messenger must be plain or traced, not '%s'\n", name, o->messenger);
    return -1;
  }
  mo.name = name;
  mo.loop = loop;
  mo.request_timeout_ms = timeout_ms;
  mo.connect_timeout_ms = 1000;
  mo.reconnect_min_ms = 20;
  mo.reconnect_max_ms = 500;
  if ((o->max_connections != NULL &&
       parse_bounded(name, "max-connections", o->max_connections, 1, 1000000,
                     &mo.max_connections) != 0) ||
      (o->frame_timeout_ms != NULL &&
       parse_bounded(name, "frame-timeout-ms", o->frame_timeout_ms, 1, 86400000,
                     &mo.frame_timeout_ms) != 0))
    return -1;
  int rc = ht_messenger_new(out, &mo);
  if (rc != 0) {
    fprintf(stderr, "%s: cannot create messenger: %s\n", name, ht_strerror(rc));
    return -1;
  }
  return 0;
}

void sim_report_cpu(const char *name) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0)
    return; /* no line: bench/sim reports the process as unmeasured */
  fprintf(stderr, "SIM-CPU %s pid=%d user_us=%lld sys_us=%lld\n", name, (int)getpid(),
          (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
          (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec);
}
