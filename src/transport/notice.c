/* Notices: one-ways the transport sends for a layer above it (hooks.h),
 * to an outgoing peer named by its URL, over the connection already
 * there. The peer list is the loop's: a call from another thread is
 * queued (one allocation) and looked up there, so the outcome is known,
 * and counted, only there.
 * Must never: block the caller, call a hook, send past a peer's write
 * budget, or count a notice other than once (sent or dropped). */
#include <stdlib.h>
#include <string.h>

#include "common/counters.h"
#include "hoptrace/error.h"
#include "transport/internal.h"

typedef struct ht_tr_notice {
  ht_tr_cmd cmd;
  ht_trace_context ctx;
  int32_t value;
  char url[TR_NAME_MAX];
} ht_tr_notice;

bool ht_tr_is_notice(const ht_envelope *env) {
  return env->operation != NULL && strcmp(env->operation, HT_NOTICE_OP) == 0;
}

/* Loop thread. */
static int send_now(ht_messenger *m, const char *url, const ht_trace_context *ctx,
                    int32_t value) {
  if (m->state == TR_CLOSING)
    return HT_ESHUTDOWN;
  for (ht_peer *p = m->peers; p != NULL; p = p->next)
    if (strcmp(p->url, url) == 0) {
      ht_envelope env = {.version = HT_WIRE_VERSION,
                         .type = HT_MSG_ONEWAY,
                         .sequence = atomic_fetch_add(&m->next_seq, 1),
                         .operation = HT_NOTICE_OP,
                         .status = value,
                         .has_trace = true,
                         .trace = *ctx};
      return ht_tr_peer_send_own(p, &env);
    }
  return HT_ENOENT;
}

/* A notice's outcome, once known. */
static int counted(int rc) {
  ht_counter_add(rc == 0 ? HT_CTR_NOTICES_SENT : HT_CTR_NOTICES_DROPPED, 1);
  return rc;
}

void ht_tr_notice_run(ht_messenger *m, ht_tr_cmd *cmd, int fail) {
  ht_tr_notice *n = (ht_tr_notice *)cmd;
  counted(fail == 0 ? send_now(m, n->url, &n->ctx, n->value) : HT_ESHUTDOWN);
  free(n);
}

int ht_transport_notice(ht_messenger *m, const char *peer_url,
                        const ht_trace_context *ctx, int32_t value) {
  if (m == NULL || peer_url == NULL || ctx == NULL)
    return counted(HT_EINVAL);
  size_t len = strlen(peer_url);
  if (len >= TR_NAME_MAX)
    return counted(HT_ENOENT); /* no peer has a name that long */
  if (ht_tr_on_loop(m))
    return counted(send_now(m, peer_url, ctx, value));
  ht_tr_notice *n = malloc(sizeof(*n));
  if (n == NULL)
    return counted(HT_ENOMEM);
  n->cmd.kind = TR_CMD_NOTICE;
  n->ctx = *ctx;
  n->value = value;
  memcpy(n->url, peer_url, len + 1);
  int rc = ht_tr_enter(m);
  if (rc == 0)
    rc = ht_tr_leave_push(m, &n->cmd);
  if (rc != 0) {
    free(n);
    counted(rc);
  }
  return rc;
}
