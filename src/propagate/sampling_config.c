/* Sampling configuration: defaults, validation, text settings (the
 * environment and a control socket use the same parser), formatting.
 * Must never: touch the active configuration (active.c does that).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hoptrace/error.h"
#include "hoptrace/sampler.h"
#include "common/sized.h"
#include "propagate/sampler_impl.h"

static const char *const kind_names[] = {"always", "never", "ratio", "rate",
                                         "parent"};

static size_t covered(size_t size) {
  return size < sizeof(ht_sampling_config) ? size : sizeof(ht_sampling_config);
}

static void config_defaults(ht_sampling_config *cfg);

void ht_sampling_config_read(const ht_sampling_config *in,
                             ht_sampling_config *out) {
  config_defaults(out);
  memcpy(out, in, covered(in->size));
  out->size = sizeof(*out);
}

static void config_defaults(ht_sampling_config *cfg) {
  memset(cfg, 0, sizeof(*cfg));
  cfg->size = sizeof(*cfg);
  cfg->kind = HT_SAMPLER_PARENT;
  cfg->root_kind = HT_SAMPLER_ALWAYS;
  cfg->ratio = 1.0;
  cfg->rate = 100.0;
  cfg->burst = 0.0;
  cfg->trust_remote_debug = 0;
  cfg->remote_debug_rate = 10.0;
}

int ht_sampling_config_default_sized(ht_sampling_config *cfg, size_t size) {
  ht_sampling_config all;
  config_defaults(&all);
  return ht_sized_fill(cfg, size, &all, sizeof(all),
                       HT_SAMPLING_CONFIG_SIZE_MIN) == 0
             ? 0
             : HT_EINVAL;
}

static int finite_at_least(double v, double lo) { return isfinite(v) && v >= lo; }

int ht_sampling_config_check(const ht_sampling_config *cfg) {
  if (!cfg || cfg->size < HT_SAMPLING_CONFIG_SIZE_MIN)
    return HT_EINVAL;
  if ((unsigned)cfg->kind > HT_SAMPLER_PARENT)
    return HT_EINVAL;
  if (cfg->kind == HT_SAMPLER_PARENT &&
      (unsigned)cfg->root_kind >= HT_SAMPLER_PARENT)
    return HT_EINVAL;
  if (!finite_at_least(cfg->ratio, 0.0) || cfg->ratio > 1.0)
    return HT_EINVAL;
  if (!finite_at_least(cfg->rate, 0.0) || !finite_at_least(cfg->burst, 0.0))
    return HT_EINVAL;
  if (cfg->burst > 0 && cfg->burst < 1)
    return HT_EINVAL;
  if (!finite_at_least(cfg->remote_debug_rate, 0.0))
    return HT_EINVAL;
  if (cfg->trust_remote_debug != 0 && cfg->trust_remote_debug != 1)
    return HT_EINVAL;
  return 0;
}

static int parse_kind(const char *v, ht_sampler_kind *out) {
  for (unsigned i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
    if (strcasecmp(v, kind_names[i]) == 0) {
      *out = (ht_sampler_kind)i;
      return 0;
    }
  return HT_EINVAL;
}

static int parse_double(const char *v, double *out) {
  char *end = NULL;
  errno = 0;
  double d = strtod(v, &end);
  if (end == v || *end != '\0' || errno == ERANGE || !isfinite(d))
    return HT_EINVAL;
  *out = d;
  return 0;
}

static int parse_bool(const char *v, int *out) {
  static const char *const yes[] = {"1", "true", "yes", "on"};
  static const char *const no[] = {"0", "false", "no", "off"};
  for (unsigned i = 0; i < 4; i++) {
    if (strcasecmp(v, yes[i]) == 0)
      return *out = 1, 0;
    if (strcasecmp(v, no[i]) == 0)
      return *out = 0, 0;
  }
  return HT_EINVAL;
}

int ht_sampling_config_set(ht_sampling_config *cfg, const char *key,
                           const char *value) {
  if (!cfg || !key || !value || cfg->size < HT_SAMPLING_CONFIG_SIZE_MIN)
    return HT_EINVAL;
  ht_sampling_config next;
  ht_sampling_config_read(cfg, &next);
  int rc;
  if (strcmp(key, "sampler") == 0)
    rc = parse_kind(value, &next.kind);
  else if (strcmp(key, "root") == 0)
    rc = parse_kind(value, &next.root_kind);
  else if (strcmp(key, "ratio") == 0)
    rc = parse_double(value, &next.ratio);
  else if (strcmp(key, "rate") == 0)
    rc = parse_double(value, &next.rate);
  else if (strcmp(key, "burst") == 0)
    rc = parse_double(value, &next.burst);
  else if (strcmp(key, "trust_remote_debug") == 0)
    rc = parse_bool(value, &next.trust_remote_debug);
  else if (strcmp(key, "remote_debug_rate") == 0)
    rc = parse_double(value, &next.remote_debug_rate);
  else
    return HT_ENOENT;
  if (rc == 0 && strcmp(key, "root") == 0 && next.root_kind == HT_SAMPLER_PARENT)
    rc = HT_EINVAL;
  if (rc == 0) {
    /* Check the whole config but only blame this key's value. */
    ht_sampling_config probe = next;
    if (probe.kind == HT_SAMPLER_PARENT && probe.root_kind == HT_SAMPLER_PARENT)
      probe.root_kind = HT_SAMPLER_ALWAYS;
    rc = ht_sampling_config_check(&probe);
  }
  if (rc == 0)
    (void)ht_sized_copy_out(cfg, &next, sizeof(next),
                            HT_SAMPLING_CONFIG_SIZE_MIN);
  return rc;
}

static const struct {
  const char *env;
  const char *key;
} env_keys[] = {
    {"HT_SAMPLER", "sampler"},
    {"HT_SAMPLE_ROOT", "root"},
    {"HT_SAMPLE_RATIO", "ratio"},
    {"HT_SAMPLE_RATE", "rate"},
    {"HT_SAMPLE_BURST", "burst"},
    {"HT_TRUST_REMOTE_DEBUG", "trust_remote_debug"},
    {"HT_REMOTE_DEBUG_RATE", "remote_debug_rate"},
};

int ht_sampling_config_from_env_sized(ht_sampling_config *out, size_t size,
                                      const char **bad_var) {
  if (bad_var)
    *bad_var = NULL;
  if (!out || size < HT_SAMPLING_CONFIG_SIZE_MIN)
    return HT_EINVAL;
  /* Built whole here, then only the caller's size of it handed over. */
  ht_sampling_config all, *cfg = &all;
  config_defaults(cfg);
  int first_err = 0;
  for (unsigned i = 0; i < sizeof(env_keys) / sizeof(env_keys[0]); i++) {
    const char *v = getenv(env_keys[i].env);
    if (!v)
      continue;
    int rc = ht_sampling_config_set(cfg, env_keys[i].key, v);
    if (rc != 0 && first_err == 0) {
      first_err = rc;
      if (bad_var)
        *bad_var = env_keys[i].env;
    }
  }
  /* A lone ratio or rate means "sample roots that way". */
  if (!getenv("HT_SAMPLER") && !getenv("HT_SAMPLE_ROOT")) {
    if (getenv("HT_SAMPLE_RATIO") && !getenv("HT_SAMPLE_RATE"))
      cfg->root_kind = HT_SAMPLER_RATIO;
    else if (getenv("HT_SAMPLE_RATE") && !getenv("HT_SAMPLE_RATIO"))
      cfg->root_kind = HT_SAMPLER_RATE;
  }
  (void)ht_sized_fill(out, size, cfg, sizeof(*cfg), HT_SAMPLING_CONFIG_SIZE_MIN);
  return first_err;
}

int ht_sampling_config_format(const ht_sampling_config *cfg, char *buf,
                              size_t cap) {
  if (!cfg || !buf || ht_sampling_config_check(cfg) != 0)
    return HT_EINVAL;
  int n = snprintf(buf, cap,
                   "sampler=%s root=%s ratio=%.17g rate=%.17g burst=%.17g "
                   "trust_remote_debug=%d remote_debug_rate=%.17g",
                   kind_names[cfg->kind],
                   kind_names[(unsigned)cfg->root_kind <= HT_SAMPLER_PARENT
                                  ? cfg->root_kind
                                  : 0],
                   cfg->ratio, cfg->rate, cfg->burst, cfg->trust_remote_debug,
                   cfg->remote_debug_rate);
  if (n < 0 || (size_t)n >= cap)
    return HT_ENOSPC;
  return 0;
}
