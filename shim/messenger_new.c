/* ht_messenger_new, the composition root: the choice between the plain
 * messenger (the transport alone) and the traced one (the transport with
 * the traced messenger's hooks), and for a traced one the process's
 * control socket (HT_CONTROL_SOCKET). It lives above the transport, the
 * traced messenger and the control plane, so that none of them calls up
 * into another: the control plane acts on traced messengers, and a
 * traced messenger never reaches the control plane.
 * Must never: read fields past the caller's opts->size (a caller built
 * against an older header has a shorter struct). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hoptrace/error.h"
#include "hoptrace/messenger.h"
#include "control/control_env.h"
#include "messenger/traced_internal.h"
#include "transport/hooks.h"

static int resolve_flavour(const ht_messenger_options *opts,
                           ht_messenger_flavour *out) {
  ht_messenger_flavour f = HT_MESSENGER_DEFAULT;
  if (opts != NULL && opts->size >= offsetof(ht_messenger_options, flavour) +
                                         sizeof(opts->flavour))
    f = opts->flavour;
  if (f == HT_MESSENGER_DEFAULT) {
    const char *env = getenv("HT_MESSENGER");
    if (env == NULL || env[0] == '\0' || strcmp(env, "plain") == 0)
      f = HT_MESSENGER_PLAIN;
    else if (strcmp(env, "traced") == 0)
      f = HT_MESSENGER_TRACED;
    else
      return HT_EINVAL;
  }
  if (f != HT_MESSENGER_PLAIN && f != HT_MESSENGER_TRACED)
    return HT_EINVAL;
  *out = f;
  return 0;
}

int ht_messenger_new(const ht_messenger_options *opts, ht_messenger **out) {
  if (out == NULL)
    return HT_EINVAL;
  ht_messenger_flavour f;
  int rc = resolve_flavour(opts, &f);
  if (rc != 0)
    return rc;
  if (f == HT_MESSENGER_TRACED) {
    /* released when the messenger is destroyed, even on failure */
    ht_shim_control_env_acquire();
    return ht_shim_traced_messenger_new(out, opts, ht_shim_control_env_release);
  }
  return ht_transport_messenger_new(out, opts, NULL, NULL);
}
