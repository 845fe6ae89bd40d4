/* Fuzz target: the control socket's command executor (ht_control_execute),
 * fed the input as newline-separated command lines, as a connected client
 * would send them. The first byte picks the reply capacity.
 * Invariants: no crash; the answer is NUL-terminated inside the buffer,
 * nothing is written past it, it starts "ok" exactly when the return
 * value is 0 or 1 and "error <NAME>" when it is negative; after every
 * command the process's sampler configuration passes
 * ht_sampling_config_check; a refused command changes nothing.
 * The sampler configuration is process-wide: each input starts from the
 * defaults so inputs stay independent (and replayable one by one). */
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "hoptrace/control.h"
#include "hoptrace/error.h"
#include "hoptrace/sampler.h"

static int same_config(const ht_sampling_config *x,
                       const ht_sampling_config *y) {
  return x->kind == y->kind && x->root_kind == y->root_kind &&
         x->ratio == y->ratio && x->rate == y->rate && x->burst == y->burst &&
         x->trust_remote_debug == y->trust_remote_debug &&
         x->remote_debug_rate == y->remote_debug_rate;
}

static void run_line(const char *line, size_t len, size_t cap) {
  /* exact-size buffer: ASan catches a write past cap */
  char *reply = malloc(cap);
  FUZZ_CHECK(reply != NULL);
  memset(reply, 0x5a, cap);
  ht_sampling_config before = {.size = sizeof(before)};
  ht_sampling_config after = {.size = sizeof(after)};
  ht_sampling_get(&before);
  int rc = ht_control_execute(line, len, reply, cap);
  ht_sampling_get(&after);
  FUZZ_CHECK(ht_sampling_config_check(&after) == 0);
  if (cap < HT_CONTROL_REPLY_MIN) {
    FUZZ_CHECK(rc == HT_ENOSPC);
    FUZZ_CHECK(same_config(&before, &after));
    free(reply);
    return;
  }
  FUZZ_CHECK(memchr(reply, '\0', cap) != NULL);
  size_t n = strlen(reply);
  FUZZ_CHECK(n > 0 && n < cap);
  for (size_t i = 0; i < n; i++) /* one answer line, printable */
    FUZZ_CHECK((reply[i] >= 0x20 && reply[i] <= 0x7e) || reply[i] == '\t');
  if (rc >= 0) {
    FUZZ_CHECK(rc <= 1);
    FUZZ_CHECK(strncmp(reply, "ok", 2) == 0);
  } else {
    FUZZ_CHECK(strncmp(reply, "error ", 6) == 0);
    const char *name = ht_err_name(rc);
    if (strncmp(name, "HT_", 3) == 0)
      name += 3;
    FUZZ_CHECK(strncmp(reply + 6, name, strlen(name)) == 0);
    FUZZ_CHECK(same_config(&before, &after)); /* all or nothing */
  }
  free(reply);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  static const size_t caps[] = {HT_CONTROL_REPLY_MIN, HT_CONTROL_REPLY_MIN,
                                HT_CONTROL_REPLY_MIN + 1, 4096,
                                HT_CONTROL_REPLY_MIN - 1, 1};
  size_t cap = caps[data[0] % (sizeof(caps) / sizeof(caps[0]))];
  data++;
  size--;
  ht_sampling_config defaults;
  ht_sampling_config_default(&defaults);
  FUZZ_CHECK(ht_sampling_set(&defaults) == 0);
  const char *text = (const char *)data;
  size_t at = 0;
  while (at < size) {
    const char *nl = memchr(text + at, '\n', size - at);
    size_t len = nl != NULL ? (size_t)(nl - (text + at)) : size - at;
    /* copy: the executor must not read past len (no NUL after the line) */
    char *line = malloc(len ? len : 1);
    FUZZ_CHECK(line != NULL);
    memcpy(line, text + at, len);
    run_line(line, len, cap);
    free(line);
    at += len + 1;
  }
  FUZZ_CHECK(ht_sampling_set(&defaults) == 0);
  return 0;
}
