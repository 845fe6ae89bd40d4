/* Messenger construction and sampling options shared by the simulator's
 * programs (see sim_common.h). Never: exit; keep any global state (a sim_log belongs to its caller). */
#include "sim_common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "hoptrace/error.h"
#include "cluster_map.h"
#include "hoptrace/sampler.h"

static int parse_bounded(const char *who, const char *opt, const char *s, unsigned long lo,
                         unsigned long hi, uint32_t *out);

/* --- the rate-limited log */

static uint64_t log_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *level_name(int level) {
  switch (level) {
  case HT_LOG_ERROR: return "error";
  case HT_LOG_WARN: return "warn";
  case HT_LOG_INFO: return "info";
  default: return "debug";
  }
}

int sim_log_init(sim_log *l, const sim_common_opts *o, const char *name) {
  memset(l, 0, sizeof(*l));
  snprintf(l->name, sizeof(l->name), "%s", name);
  l->per_sec = 10;
  if (o != NULL && o->log_rate != NULL &&
      parse_bounded(name, "log-rate", o->log_rate, 0, 1000000, &l->per_sec) != 0)
    return -1;
  pthread_mutex_init(&l->lock, NULL);
  return 0;
}

/* The kind of a message: FNV-1a of the level and the text without digits
 * (never 0: 0 marks a free slot). */
static uint64_t kind_hash(int level, const char *msg) {
  uint64_t h = 14695981039346656037ull ^ (uint64_t)(level + 1);
  h *= 1099511628211ull;
  for (const unsigned char *p = (const unsigned char *)msg; *p != '\0'; p++)
    if (*p < '0' || *p > '9')
      h = (h ^ *p) * 1099511628211ull;
  return h ? h : 1;
}

/* Prints k's held-back count, if any; lock held. */
static void kind_report(sim_log *l, sim_log_kind *k, uint64_t now) {
  if (k->suppressed > 0)
    fprintf(stderr, "hoptrace[%s] %s: %llu more like this suppressed in %.1f s: %s\n", l->name,
            level_name(k->level), (unsigned long long)k->suppressed,
            (double)(now - k->window_ns) / 1e9, k->last);
  k->suppressed = 0;
}

void sim_log_line(void *arg, ht_log_level level, const char *msg) {
  sim_log *l = arg;
  if (l->per_sec == 0) {
    fprintf(stderr, "hoptrace[%s] %s: %s\n", l->name, level_name((int)level), msg);
    return;
  }
  uint64_t h = kind_hash((int)level, msg), now = log_now_ns();
  pthread_mutex_lock(&l->lock);
  sim_log_kind *k = &l->kinds[h % SIM_LOG_KINDS];
  if (k->hash != h || now - k->window_ns >= 1000000000ull) {
    kind_report(l, k, now); /* a new second, or another kind takes the slot */
    k->hash = h;
    k->window_ns = now;
    k->lines = 0;
    k->level = (int)level;
  }
  if (k->lines < l->per_sec) {
    k->lines++;
    fprintf(stderr, "hoptrace[%s] %s: %s\n", l->name, level_name((int)level), msg);
  } else {
    k->suppressed++;
    l->suppressed_total++;
    snprintf(k->last, sizeof(k->last), "%s", msg);
  }
  pthread_mutex_unlock(&l->lock);
}

void sim_log_printf(sim_log *l, ht_log_level level, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  sim_log_line(l, level, msg);
}

void sim_log_flush(sim_log *l) {
  uint64_t now = log_now_ns();
  pthread_mutex_lock(&l->lock);
  for (unsigned i = 0; i < SIM_LOG_KINDS; i++)
    if (l->kinds[i].suppressed > 0 && now - l->kinds[i].window_ns >= 1000000000ull)
      kind_report(l, &l->kinds[i], now);
  pthread_mutex_unlock(&l->lock);
}

void sim_log_finish(sim_log *l) {
  uint64_t now = log_now_ns();
  pthread_mutex_lock(&l->lock);
  for (unsigned i = 0; i < SIM_LOG_KINDS; i++)
    kind_report(l, &l->kinds[i], now);
  pthread_mutex_unlock(&l->lock);
  pthread_mutex_destroy(&l->lock);
}

int sim_common_option(sim_common_opts *o, int c, const char *arg) {
  switch (c) {
  case 0x1001: o->messenger = arg; return 1;
  case 0x1002: o->sampler = arg; return 1;
  case 0x1003: o->sample_ratio = arg; return 1;
  case 0x1004: o->control_socket = arg; return 1;
  case 0x1005: o->max_connections = arg; return 1;
  case 0x1006: o->frame_timeout_ms = arg; return 1;
  case 0x1007: o->log_rate = arg; return 1;
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
  long v;
  if (sim_parse_long(who, opt, s, (long)lo, (long)hi, &v) != 0)
    return -1;
  *out = (uint32_t)v;
  return 0;
}

int sim_parse_long(const char *who, const char *opt, const char *s, long lo, long hi,
                   long *out) {
  char *end = NULL;
  long n = 0;
  int ok = s[0] == '-' || (s[0] >= '0' && s[0] <= '9');
  if (ok) {
    errno = 0;
    n = strtol(s, &end, 10);
    ok = *end == '\0' && errno == 0 && n >= lo && n <= hi;
  }
  if (!ok) {
    fprintf(stderr, "%s: --%s must be a whole number in %ld..%ld, not '%s'\n", who, opt, lo, hi,
            s);
    return -1;
  }
  *out = n;
  return 0;
}

int sim_parse_double(const char *who, const char *opt, const char *s, double lo, double hi,
                     double *out) {
  char *end;
  errno = 0;
  double d = strtod(s, &end);
  /* !(lo <= d <= hi) also refuses nan; the range refuses inf */
  if (s[0] == '\0' || s[0] == ' ' || *end != '\0' || errno != 0 || !(d >= lo && d <= hi)) {
    fprintf(stderr, "%s: --%s must be a number in %g..%g, not '%s'\n", who, opt, lo, hi, s);
    return -1;
  }
  *out = d;
  return 0;
}

void sim_listen_error(const char *name, const char *url, int rc) {
  /* the messenger says why (HT_EADDRINUSE, HT_EACCES, ...) */
  if (rc == HT_EADDRINUSE)
    fprintf(stderr, "%s: listen %s: address already in use (EADDRINUSE): another process "
                    "listens on this port\n", name, url);
  else
    fprintf(stderr, "%s: listen %s: %s (%s)\n", name, url, ht_strerror(rc), ht_err_name(rc));
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
                         struct uv_loop_s *loop, uint32_t timeout_ms, sim_log *log) {
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
  mo.log = sim_log_line;
  mo.log_arg = log;
  if ((o->max_connections != NULL &&
       parse_bounded(name, "max-connections", o->max_connections, 1, 1000000,
                     &mo.max_connections) != 0) ||
      (o->frame_timeout_ms != NULL &&
       parse_bounded(name, "frame-timeout-ms", o->frame_timeout_ms, 1, 86400000,
                     &mo.frame_timeout_ms) != 0))
    return -1;
  int rc = ht_messenger_new(&mo, out);
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
  fprintf(stderr, "SIM-CPU %s pid=%d user_us=%lld sys_us=%lld vcsw=%ld ivcsw=%ld\n",
          name, (int)getpid(),
          (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
          (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec,
          ru.ru_nvcsw, ru.ru_nivcsw);
}

void sim_block_stop_signals(sigset_t *stop) {
  sigemptyset(stop);
  sigaddset(stop, SIGTERM);
  sigaddset(stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, stop, NULL);
  signal(SIGPIPE, SIG_IGN);
}
