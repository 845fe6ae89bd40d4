/* The flight recorder's triggers (include/hoptrace/capture.h): the
 * policy, read by the traced messenger as each recorded span ends, and
 * the capture event it fires. Thresholds are plain atomics: a policy
 * change is seen by the next span that ends, and never half (each
 * threshold is one word; a span may see the old slow-client beside the
 * new error switch for the instant of the change).
 * Must never: block, allocate, or cost a span that records nothing. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hoptrace/capture.h"
#include "hoptrace/error.h"
#include "common/clock.h"
#include "common/counters.h"
#include "common/sized.h"
#include "messenger/traced_adaptive.h"
#include "messenger/traced_capture.h"
#include "propagate/events.h"
#include "propagate/span_path.h"
#include "hoptrace_schema.h"

static _Atomic uint64_t slow_client_ns, slow_server_ns;
static atomic_int errors_fire, adaptive_client, adaptive_server;
atomic_bool ht_shim_capture_armed_;
atomic_uint ht_shim_reply_gate_;

/* Automatic captures a second, per process (HT_CAPTURE_RATE; 0: no
 * limit): a storm where every span fires would otherwise send the
 * session daemon an event notification per span (lttng-sessiond 2.13 was
 * seen to deadlock under one) and cost the messenger a capture event and
 * notices per span, while the host snapshots at most twice a second. */
#define CAPTURE_RATE_DEFAULT 1000
static _Atomic uint64_t rate_per_s = CAPTURE_RATE_DEFAULT;
static _Atomic uint64_t window_s, window_used;

static pthread_once_t env_once = PTHREAD_ONCE_INIT;

/* The smallest policy a caller may give, pinned to a field's end so that
 * appending one does not move it. */
#define POLICY_SIZE_MIN (offsetof(ht_capture_policy, errors) + sizeof(int))
#define POLICY_SIZE_ADAPTIVE                                                   \
  (offsetof(ht_capture_policy, adaptive_server) + sizeof(int))

static bool policy_valid(const ht_capture_policy *p) {
  return p != NULL && p->size >= POLICY_SIZE_MIN;
}

/* A parsed policy into the caller's size of *out; HT_EINVAL, out
 * untouched, when it asks for p99.9 and out's size has no room for it. */
static int fill_policy(ht_capture_policy *out, size_t size,
                       const ht_capture_policy *p) {
  if ((p->adaptive_client || p->adaptive_server) && size < POLICY_SIZE_ADAPTIVE)
    return HT_EINVAL;
  return ht_sized_fill(out, size, p, sizeof(*p), POLICY_SIZE_MIN) == 0 ? 0 : HT_EINVAL;
}

static void policy_store(const ht_capture_policy *p) {
  atomic_store_explicit(&slow_client_ns, p->slow_client_ns, memory_order_relaxed);
  atomic_store_explicit(&slow_server_ns, p->slow_server_ns, memory_order_relaxed);
  atomic_store_explicit(&errors_fire, p->errors != 0, memory_order_relaxed);
  bool adaptive = p->size >= POLICY_SIZE_ADAPTIVE;
  int client = adaptive && p->adaptive_client, server = adaptive && p->adaptive_server;
  if ((client && !atomic_load(&adaptive_client)) || (server && !atomic_load(&adaptive_server)))
    ht_shim_adaptive_reset(); /* a minute from now, not from the last time */
  atomic_store_explicit(&adaptive_client, client, memory_order_relaxed);
  atomic_store_explicit(&adaptive_server, server, memory_order_relaxed);
  bool armed =
      p->errors != 0 || p->slow_client_ns != 0 || p->slow_server_ns != 0 || client || server;
  atomic_store_explicit(&ht_shim_capture_armed_, armed, memory_order_relaxed);
  if (armed)
    atomic_fetch_or_explicit(&ht_shim_reply_gate_, HT_SHIM_GATE_ARMED, memory_order_relaxed);
  else
    atomic_fetch_and_explicit(&ht_shim_reply_gate_, ~HT_SHIM_GATE_ARMED, memory_order_relaxed);
}

/* HT_CAPTURE, as capture.h says; a bad value is reported and ignored, as
 * a bad sampler is. */
static void rate_from_env(void) {
  const char *text = getenv("HT_CAPTURE_RATE");
  if (text == NULL || *text == '\0')
    return;
  char *end;
  unsigned long long n = strtoull(text, &end, 10);
  if (*end == '\0' && text[0] >= '0' && text[0] <= '9' && n <= 1000000)
    atomic_store(&rate_per_s, (uint64_t)n);
  else
    fprintf(stderr, "hoptrace: ignoring HT_CAPTURE_RATE=%s (0 to 1000000; %d kept)\n", text,
            CAPTURE_RATE_DEFAULT);
}

/* One more automatic capture this second, or false (counted) past the
 * rate. A window per second of the tracer's clock: at a window's edge two
 * threads may both start it, a few more pass: bounded all the same. */
static bool rate_allows(uint64_t now_ns) {
  uint64_t limit = atomic_load_explicit(&rate_per_s, memory_order_relaxed);
  if (limit == 0)
    return true;
  uint64_t s = now_ns / 1000000000u;
  if (atomic_load_explicit(&window_s, memory_order_relaxed) != s) {
    atomic_store_explicit(&window_used, 0, memory_order_relaxed);
    atomic_store_explicit(&window_s, s, memory_order_relaxed);
  }
  if (atomic_fetch_add_explicit(&window_used, 1, memory_order_relaxed) < limit)
    return true;
  ht_counter_add(HT_CTR_CAPTURES_LIMITED, 1);
  return false;
}

static void policy_from_env(void) {
  rate_from_env();
  const char *text = getenv("HT_CAPTURE");
  ht_capture_policy p;
  if (text == NULL || *text == '\0')
    return;
  if (ht_capture_policy_parse(text, &p) == 0)
    policy_store(&p);
  else
    fprintf(stderr, "hoptrace: ignoring HT_CAPTURE=%s (bad value: off kept)\n", text);
}

void ht_shim_capture_env(void) { pthread_once(&env_once, policy_from_env); }

int ht_capture_policy_set(const ht_capture_policy *p) {
  if (!policy_valid(p))
    return HT_EINVAL;
  ht_shim_capture_env(); /* first: the caller's policy wins over the variable */
  policy_store(p);
  return 0;
}

int ht_capture_policy_get(ht_capture_policy *out) {
  ht_shim_capture_env();
  ht_capture_policy all = {
      sizeof(all), atomic_load_explicit(&slow_client_ns, memory_order_relaxed),
      atomic_load_explicit(&slow_server_ns, memory_order_relaxed),
      atomic_load_explicit(&errors_fire, memory_order_relaxed),
      atomic_load_explicit(&adaptive_client, memory_order_relaxed),
      atomic_load_explicit(&adaptive_server, memory_order_relaxed)};
  return ht_sized_copy_out(out, &all, sizeof(all),
                           offsetof(ht_capture_policy, errors) + sizeof(all.errors)) == 0
             ? 0
             : HT_EINVAL;
}

/* "250ms" -> 250000000; false for anything else (no sign, no overflow). */
static bool parse_duration(const char *s, uint64_t *ns) {
  static const struct { const char *unit; uint64_t mult; } units[] = {
      {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
  if (*s < '0' || *s > '9')
    return false;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
    if (strcmp(end, units[i].unit) == 0) {
      if (v > UINT64_MAX / units[i].mult)
        return false;
      *ns = (uint64_t)v * units[i].mult;
      return true;
    }
  return false;
}

#define POLICY_TEXT_MAX 256

int ht_capture_policy_parse_sized(const char *text, ht_capture_policy *out,
                                  size_t size) {
  if (text == NULL || out == NULL || size < POLICY_SIZE_MIN)
    return HT_EINVAL;
  size_t len = strlen(text);
  if (len >= POLICY_TEXT_MAX)
    return HT_EINVAL;
  ht_capture_policy p = {.size = sizeof(p)};
  if (strcmp(text, "off") == 0)
    return fill_policy(out, size, &p);
  char buf[POLICY_TEXT_MAX];
  memcpy(buf, text, len + 1);
  char *save = NULL;
  int words = 0;
  for (char *w = strtok_r(buf, ",", &save); w != NULL; w = strtok_r(NULL, ",", &save)) {
    words++;
    if (strcmp(w, "error") == 0)
      p.errors = 1;
    else if (strncmp(w, "slow-client=", 12) == 0 || strncmp(w, "slow-server=", 12) == 0) {
      bool client = w[5] == 'c';
      uint64_t *ns = client ? &p.slow_client_ns : &p.slow_server_ns;
      int *adaptive = client ? &p.adaptive_client : &p.adaptive_server;
      *ns = 0;
      *adaptive = strcmp(w + 12, "p99.9") == 0;
      if (!*adaptive && (!parse_duration(w + 12, ns) || *ns == 0))
        return HT_EINVAL;
    } else
      return HT_EINVAL;
  }
  if (words == 0)
    return HT_EINVAL;
  return fill_policy(out, size, &p);
}

/* One side's word ("slow-client=..."), "" when that side is off. */
static void side_word(char *w, size_t cap, const char *side, uint64_t ns, int adaptive) {
  if (adaptive)
    snprintf(w, cap, "slow-%s=p99.9", side);
  else if (ns != 0)
    snprintf(w, cap, "slow-%s=%lluns", side, (unsigned long long)ns);
  else
    w[0] = '\0';
}

int ht_capture_policy_format(const ht_capture_policy *p, char *buf, size_t cap) {
  if (p == NULL || buf == NULL || cap == 0)
    return HT_EINVAL;
  bool adaptive = p->size >= POLICY_SIZE_ADAPTIVE;
  char words[3][40];
  side_word(words[0], sizeof(words[0]), "client", p->slow_client_ns,
            adaptive && p->adaptive_client);
  side_word(words[1], sizeof(words[1]), "server", p->slow_server_ns,
            adaptive && p->adaptive_server);
  snprintf(words[2], sizeof(words[2]), "%s", p->errors ? "error" : "");
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < 3; i++) {
    if (words[i][0] == '\0')
      continue;
    int n = snprintf(buf + len, cap - len, "%s%s", len ? "," : "", words[i]);
    if (n < 0 || (size_t)n >= cap - len) {
      buf[0] = '\0';
      return HT_ENOSPC;
    }
    len += (size_t)n;
  }
  if (len == 0 && snprintf(buf, cap, "off") >= (int)cap) {
    buf[0] = '\0';
    return HT_ENOSPC;
  }
  return 0;
}

void ht_shim_capture_fire(const ht_trace_context *ctx, uint8_t why, uint8_t hops,
                          uint64_t threshold, uint64_t value, const char *origin) {
  ht_capture_note note = {why, hops, threshold, value, origin != NULL ? origin : ""};
  const ht_event_ops *ops = ht_events_current();
  ht_counter_add(HT_CTR_CAPTURES_FIRED, 1);
  if (ops == NULL || ops->capture == NULL || ops->capture(ctx, &note) == 0)
    ht_counter_add(HT_CTR_CAPTURES_UNRECORDED, 1);
}

bool ht_shim_capture_check_(const ht_trace_context *ctx, bool client, uint64_t start_ns,
                            int32_t status, const char *service, const void *desc) {
  if (status != 0 && atomic_load_explicit(&errors_fire, memory_order_relaxed)) {
    if (!rate_allows(ht_clock_now()))
      return false;
    ht_shim_capture_fire(ctx, HT_CAPTURE_ERROR, 0, 0, (uint64_t)(int64_t)status, service);
    return true;
  }
  uint64_t limit = atomic_load_explicit(client ? &slow_client_ns : &slow_server_ns,
                                        memory_order_relaxed);
  int adaptive = atomic_load_explicit(client ? &adaptive_client : &adaptive_server,
                                      memory_order_relaxed);
  if ((limit == 0 && !adaptive) || start_ns == 0)
    return false;
  uint64_t now = ht_clock_now(), took = now - start_ns;
  if ((int64_t)took <= 0)
    return false;
  if (adaptive ? !ht_shim_adaptive_slow(desc, took, now, &limit) : took <= limit)
    return false;
  if (!rate_allows(now))
    return false;
  ht_shim_capture_fire(ctx, client ? HT_CAPTURE_SLOW_CLIENT : HT_CAPTURE_SLOW_SERVER, 0,
                       limit, took, service);
  return true;
}

bool ht_shim_capture_noticed(const ht_trace_context *ctx, unsigned hops, const char *service) {
  if (!rate_allows(ht_clock_now()))
    return false;
  ht_shim_capture_fire(ctx, HT_CAPTURE_NOTICE, (uint8_t)(hops > 255 ? 255 : hops), 0, 0, service);
  return true;
}

int ht_capture_trace(const ht_trace_context *ctx) {
  ht_trace_context none = {0};
  if (ctx != NULL && ctx->trace_id_hi == 0 && ctx->trace_id_lo == 0)
    return HT_EBADCONTEXT;
  ht_shim_capture_fire(ctx != NULL ? ctx : &none, HT_CAPTURE_MANUAL, 0, 0, 0, "manual");
  return 0;
}
