/* The control protocol's commands: one text line in, one answer out.
 * The input is untrusted (anyone the socket lets in may be buggy): every
 * length is bounded, nothing is allocated, and a bad line gets an
 * "error" answer, never a crash or a partial change.
 * Must never: apply part of a command, or echo input unbounded. */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "hoptrace/capture.h"
#include "hoptrace/control.h"
#include "hoptrace/error.h"
#include "hoptrace/sampler.h"
#include "hoptrace/traced.h"
#include "common/hex.h"
#include "recording/flight_memory.h"

#define MAX_TOKENS 16

typedef struct cmd_line {
  char buf[HT_CONTROL_LINE_MAX + 1];
  char *tok[MAX_TOKENS];
  int n;
} cmd_line;

typedef struct answer {
  char *buf;
  size_t cap, len;
} answer;

static void put(answer *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void put(answer *a, const char *fmt, ...) {
  if (a->len >= a->cap)
    return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(a->buf + a->len, a->cap - a->len, fmt, ap);
  va_end(ap);
  if (n > 0)
    a->len = (size_t)n < a->cap - a->len ? a->len + (size_t)n : a->cap - 1;
}

/* "EINVAL" for HT_EINVAL. */
static const char *code_name(int code) {
  const char *n = ht_err_name(code);
  return strncmp(n, "HT_", 3) == 0 ? n + 3 : n;
}

static int fail(answer *a, int code, const char *what, const char *input) {
  a->len = 0;
  if (input != NULL)
    put(a, "error %s %s: '%.40s'", code_name(code), what, input);
  else
    put(a, "error %s %s", code_name(code), what);
  return code;
}

/* Copies and splits the line; HT_EINVAL for bytes outside printable
 * ASCII, too long lines or too many words. */
static int tokenize(const char *line, size_t len, cmd_line *c, answer *a) {
  while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
    len--;
  if (len > HT_CONTROL_LINE_MAX)
    return fail(a, HT_EINVAL, "line too long", NULL);
  for (size_t i = 0; i < len; i++)
    if ((line[i] < 0x20 || line[i] > 0x7e) && line[i] != '\t')
      return fail(a, HT_EINVAL, "non-printable byte in command", NULL);
  memcpy(c->buf, line, len);
  c->buf[len] = '\0';
  c->n = 0;
  for (char *p = c->buf; *p != '\0';) {
    while (*p == ' ' || *p == '\t')
      *p++ = '\0';
    if (*p == '\0')
      break;
    if (c->n == MAX_TOKENS)
      return fail(a, HT_EINVAL, "too many words", NULL);
    c->tok[c->n++] = p;
    while (*p != '\0' && *p != ' ' && *p != '\t')
      p++;
  }
  return 0;
}

/* Applies "key=value" words to cfg (a copy: the caller commits). */
static int apply_pairs(ht_sampling_config *cfg, char **words, int n,
                       answer *a) {
  for (int i = 0; i < n; i++) {
    char *eq = strchr(words[i], '=');
    if (eq == NULL || eq == words[i])
      return fail(a, HT_EINVAL, "expected key=value", words[i]);
    *eq = '\0';
    int rc = ht_sampling_config_set(cfg, words[i], eq + 1);
    *eq = '=';
    if (rc == HT_ENOENT)
      return fail(a, rc, "unknown setting", words[i]);
    if (rc != 0)
      return fail(a, rc, "bad value", words[i]);
  }
  return 0;
}

static void put_config(answer *a) {
  ht_sampling_config cfg = {.size = sizeof(cfg)};
  char text[256];
  ht_sampling_get(&cfg);
  if (ht_sampling_config_format(&cfg, text, sizeof(text)) == 0)
    put(a, " %s", text);
}

static int commit(ht_sampling_config *cfg, answer *a) {
  int rc = ht_sampling_set(cfg);
  if (rc != 0)
    return fail(a, rc, "configuration refused", NULL);
  put(a, "ok");
  put_config(a);
  return 0;
}

static void put_capture_state(answer *a);

static int cmd_status(answer *a) {
  ht_sampling_stats s = {.size = sizeof(s)};
  ht_traced_stats t = {.size = sizeof(t)};
  ht_sampling_get_stats(&s);
  ht_traced_get_stats(&t);
  put(a, "ok");
  put_config(a);
  put(a,
      " traces_started=%llu traces_sampled=%llu traces_dropped=%llu"
      " remote_received=%llu remote_sampled=%llu remote_dropped=%llu"
      " debug_forced=%llu remote_debug_honoured=%llu"
      " remote_debug_refused=%llu config_changes=%llu",
      (unsigned long long)s.traces_started,
      (unsigned long long)s.traces_sampled,
      (unsigned long long)s.traces_dropped,
      (unsigned long long)s.remote_received,
      (unsigned long long)s.remote_sampled,
      (unsigned long long)s.remote_dropped,
      (unsigned long long)s.debug_forced,
      (unsigned long long)s.remote_debug_honoured,
      (unsigned long long)s.remote_debug_refused,
      (unsigned long long)s.config_changes);
  put(a,
      " msgs_sent=%llu msgs_received=%llu bytes_sent=%llu bytes_received=%llu"
      " msgs_sent_sampled=%llu msgs_received_sampled=%llu"
      " requests_failed=%llu",
      (unsigned long long)t.msgs_sent, (unsigned long long)t.msgs_received,
      (unsigned long long)t.bytes_sent, (unsigned long long)t.bytes_received,
      (unsigned long long)t.msgs_sent_sampled,
      (unsigned long long)t.msgs_received_sampled,
      (unsigned long long)t.requests_failed);
  put_capture_state(a);
  return 0;
}

static int cmd_change(cmd_line *c, answer *a) {
  const char *cmd = c->tok[0];
  ht_sampling_config cfg = {.size = sizeof(cfg)};
  ht_sampling_get(&cfg);
  int rc;
  if (strcmp(cmd, "sample") == 0) {
    if (c->n != 2)
      return fail(a, HT_EINVAL, "usage: sample RATIO", NULL);
    if ((rc = ht_sampling_config_set(&cfg, "ratio", c->tok[1])) != 0)
      return fail(a, rc, "bad ratio", c->tok[1]);
    ht_sampling_config_set(&cfg, "sampler", "ratio");
  } else if (strcmp(cmd, "sampler") == 0) {
    if (c->n < 2)
      return fail(a, HT_EINVAL, "usage: sampler KIND [key=value ...]", NULL);
    if ((rc = ht_sampling_config_set(&cfg, "sampler", c->tok[1])) != 0)
      return fail(a, rc, "bad sampler", c->tok[1]);
    if ((rc = apply_pairs(&cfg, c->tok + 2, c->n - 2, a)) != 0)
      return rc;
  } else if (strcmp(cmd, "set") == 0) {
    if (c->n < 2)
      return fail(a, HT_EINVAL, "usage: set key=value [key=value ...]", NULL);
    if ((rc = apply_pairs(&cfg, c->tok + 1, c->n - 1, a)) != 0)
      return rc;
  } else { /* trust-debug */
    if (c->n < 2 || c->n > 3)
      return fail(a, HT_EINVAL, "usage: trust-debug on|off [RATE]", NULL);
    if ((rc = ht_sampling_config_set(&cfg, "trust_remote_debug", c->tok[1])))
      return fail(a, rc, "bad trust value", c->tok[1]);
    if (c->n == 3 &&
        (rc = ht_sampling_config_set(&cfg, "remote_debug_rate", c->tok[2])))
      return fail(a, rc, "bad rate", c->tok[2]);
  }
  return commit(&cfg, a);
}

/* A 128-bit trace id in 32 hex digits (16: a 64-bit one), either case. */
static bool parse_trace_id(const char *s, ht_trace_context *ctx) {
  size_t n = strlen(s);
  char lower[32];
  uint64_t hi = 0, lo = 0;
  if (n != 16 && n != 32)
    return false;
  for (size_t i = 0; i < n; i++)
    lower[i] = (char)tolower((unsigned char)s[i]);
  if ((n == 32 && !ht_hex_parse_u64(lower, 16, &hi)) ||
      !ht_hex_parse_u64(lower + n - 16, 16, &lo))
    return false;
  *ctx = (ht_trace_context){.trace_id_hi = hi, .trace_id_lo = lo};
  return hi != 0 || lo != 0;
}

static void put_capture_state(answer *a) {
  ht_capture_policy p = {.size = sizeof(p)};
  char text[128];
  ht_traced_stats t = {.size = sizeof(t)};
  ht_capture_policy_get(&p);
  ht_traced_get_stats(&t);
  if (ht_capture_policy_format(&p, text, sizeof(text)) != 0)
    text[0] = '\0';
  put(a, " flight=%s capture=%s captures_fired=%llu captures_unrecorded=%llu"
      " notices_sent=%llu notices_dropped=%llu notices_received=%llu"
      " notices_refused=%llu captures_limited=%llu crumb_peers_dropped=%llu",
      ht_flight_enabled() ? "on" : "off", text,
      (unsigned long long)t.captures_fired, (unsigned long long)t.captures_unrecorded,
      (unsigned long long)t.notices_sent, (unsigned long long)t.notices_dropped,
      (unsigned long long)t.notices_received, (unsigned long long)t.notices_refused,
      (unsigned long long)t.captures_limited, (unsigned long long)t.crumb_peers_dropped);
  if (!ht_fm_on())
    return;
  ht_fm_stats m;
  ht_fm_stats_get(&m);
  put(a, " memory_captures=%llu memory_unreplayed=%llu memory_scans=%llu"
      " memory_sides=%llu memory_tags=%llu memory_lost=%llu",
      (unsigned long long)m.captures, (unsigned long long)m.unreplayed,
      (unsigned long long)m.scans, (unsigned long long)m.sides,
      (unsigned long long)m.tags, (unsigned long long)ht_fr_lost());
}

/* flight on|off, capture-policy TEXT, capture [TRACE]. */
static int cmd_capture(cmd_line *c, answer *a) {
  const char *cmd = c->tok[0];
  if (strcmp(cmd, "flight") == 0) {
    if (c->n != 2 || (strcmp(c->tok[1], "on") != 0 && strcmp(c->tok[1], "off") != 0))
      return fail(a, HT_EINVAL, "usage: flight on|off", NULL);
    ht_flight_set(strcmp(c->tok[1], "on") == 0);
  } else if (strcmp(cmd, "capture-policy") == 0) {
    ht_capture_policy p;
    if (c->n != 2)
      return fail(a, HT_EINVAL, "usage: capture-policy off|slow-client=D,slow-server=D,error", NULL);
    if (ht_capture_policy_parse(c->tok[1], &p) != 0)
      return fail(a, HT_EINVAL, "bad capture policy", c->tok[1]);
    ht_capture_policy_set(&p);
  } else { /* capture [TRACE] */
    ht_trace_context ctx;
    if (c->n > 2)
      return fail(a, HT_EINVAL, "usage: capture [TRACE_ID]", NULL);
    if (c->n == 2 && !parse_trace_id(c->tok[1], &ctx))
      return fail(a, HT_EINVAL, "bad trace id (16 or 32 hex digits)", c->tok[1]);
    ht_capture_trace(c->n == 2 ? &ctx : NULL);
  }
  put(a, "ok");
  put_capture_state(a);
  return 0;
}

static const char help_text[] =
    "ok commands: status | sample RATIO | sampler KIND [key=value ...] |"
    " set key=value ... | trust-debug on|off [RATE] | flight on|off |"
    " capture-policy off|slow-client=D,slow-server=D,error | capture [TRACE] |"
    " help | quit; keys: sampler root ratio rate burst trust_remote_debug"
    " remote_debug_rate";

int ht_control_execute(const char *line, size_t len, char *reply,
                       size_t cap) {
  if (reply == NULL || cap < HT_CONTROL_REPLY_MIN)
    return HT_ENOSPC;
  answer a = {reply, cap, 0};
  reply[0] = '\0';
  if (line == NULL)
    return fail(&a, HT_EINVAL, "no command", NULL);
  cmd_line c;
  int rc = tokenize(line, len, &c, &a);
  if (rc != 0)
    return rc;
  if (c.n == 0)
    return fail(&a, HT_EINVAL, "empty command (try help)", NULL);
  const char *cmd = c.tok[0];
  if (strcmp(cmd, "status") == 0 && c.n == 1)
    return cmd_status(&a);
  if (strcmp(cmd, "help") == 0) {
    put(&a, "%s", help_text);
    return 0;
  }
  if (strcmp(cmd, "quit") == 0) {
    put(&a, "ok bye");
    return 1;
  }
  if (strcmp(cmd, "flight") == 0 || strcmp(cmd, "capture-policy") == 0 ||
      strcmp(cmd, "capture") == 0)
    return cmd_capture(&c, &a);
  if (strcmp(cmd, "sample") == 0 || strcmp(cmd, "sampler") == 0 ||
      strcmp(cmd, "set") == 0 || strcmp(cmd, "trust-debug") == 0)
    return cmd_change(&c, &a);
  return fail(&a, HT_EINVAL, "unknown command (try help)", cmd);
}
