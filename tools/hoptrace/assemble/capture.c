/* A trace's capture events: the first trigger says why it was captured,
 * notices say which processes it reached; at emission, what of it was
 * gone and the root's capture tags. Never touches a span's timing. */
#include "assemble/capture.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const char *capture_reason(uint8_t why) {
  switch (why) {
  case HOP_CAPTURE_SLOW_CLIENT: return "slow-client";
  case HOP_CAPTURE_ERROR: return "error";
  case HOP_CAPTURE_SLOW_SERVER: return "slow-server";
  case HOP_CAPTURE_MANUAL: return "manual";
  case HOP_CAPTURE_NOTICE: return "notice";
  default: return "unknown";
  }
}

/* A capture event: the trace's, never a span (its span id names the span
 * that fired, 0 by hand). */
int capture_add(span_mem *mem, assembler_stats *stats, trace *t, const hop_event *ev) {
  capture_info *c = t->capture;
  if (c == NULL) {
    if ((c = trace_alloc(mem, t, sizeof(*c))) == NULL)
      return -1;
    memset(c, 0, sizeof(*c));
    t->capture = c;
  }
  c->events++;
  const char *host = trace_str(mem, t, ev->hostname);
  if (host == NULL)
    return -1;
  int32_t pid = ev->vpid < 0 ? -1 : ev->vpid > INT32_MAX ? INT32_MAX : (int32_t)ev->vpid;
  if (ev->capture_hops == 0 && ev->capture_why != HOP_CAPTURE_NOTICE) {
    c->triggers++;
    stats->triggers[ev->capture_why < HOP_CAPTURE_WHY_MAX ? ev->capture_why : 0]++;
    if (c->triggers == 1) { /* the first trigger is why it was captured */
      c->why = ev->capture_why;
      c->threshold = ev->capture_threshold;
      c->value = ev->capture_value;
      c->host = host;
      c->pid = pid;
      if ((c->origin = trace_str(mem, t, ev->service)) == NULL)
        return -1;
    }
    return 0;
  }
  stats->notices++;
  for (uint32_t i = 0; i < c->n_procs; i++)
    if (c->procs[i].pid == pid && strcmp(c->procs[i].host, host) == 0)
      return 0;
  c->answered++;
  if (c->n_procs < CAPTURE_MAX_PROCS)
    c->procs[c->n_procs++] = (capture_proc){host, pid, false};
  return 0;
}

static bool same_process(const span *s, const char *host, int32_t pid) {
  return s->vpid == pid && strcmp(s->hostname != NULL ? s->hostname : "", host) == 0;
}

static bool has_server_child(const span *s) {
  for (uint32_t i = 0; i < s->n_children; i++)
    if (s->children[i]->kind == HOP_KIND_SERVER)
      return true;
  return false;
}

bool capture_partial(const trace *t) {
  const capture_info *c = t->capture;
  return c != NULL && (t->n_spans == 0 || c->procs_gone > 0 || c->servers_gone > 0);
}

static int tag_root(span_mem *mem, trace *t, span *root) {
  const capture_info *c = t->capture;
  char text[320];
  if (span_add_tag(mem, t, root, "hoptrace.capture.reason", false, 0,
                   c->triggers > 0 ? capture_reason(c->why)
                                   : "unknown: only capture notices, the process that fired"
                                     " is not in the input") != 0)
    return -1;
  if (c->triggers > 0 && (c->why == HOP_CAPTURE_SLOW_CLIENT || c->why == HOP_CAPTURE_SLOW_SERVER)) {
    snprintf(text, sizeof(text), "%.3f", (double)c->threshold / 1e6);
    if (span_add_tag(mem, t, root, "hoptrace.capture.threshold_ms", false, 0, text) != 0)
      return -1;
    snprintf(text, sizeof(text), "%.3f", (double)c->value / 1e6);
    if (span_add_tag(mem, t, root, "hoptrace.capture.value_ms", false, 0, text) != 0)
      return -1;
  }
  if (c->triggers > 0 && c->why == HOP_CAPTURE_ERROR &&
      span_add_tag(mem, t, root, "hoptrace.capture.status", true,
                   (int64_t)(int32_t)(uint32_t)c->value, NULL) != 0)
    return -1;
  if (c->triggers > 0) {
    snprintf(text, sizeof(text), "%s (host %s, pid %" PRId32 ")",
             c->origin[0] ? c->origin : "?", c->host[0] ? c->host : "?", c->pid);
    if (span_add_tag(mem, t, root, "hoptrace.capture.by", false, 0, text) != 0)
      return -1;
  }
  if (t->unsettled &&
      span_add_tag(mem, t, root, "hoptrace.capture.settled", false, 0,
                   "no: written when the follower stopped, before its settle time") != 0)
    return -1;
  return span_add_tag(mem, t, root, "hoptrace.capture.hosts", true, c->answered, NULL);
}

/* A captured trace at emission: which processes the notice reached hold
 * none of its spans (their rings overwrote them before the notice came),
 * which answered calls have no server span; the root tagged with why. */
int capture_settle(span_mem *mem, trace *t) {
  capture_info *c = t->capture;
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    for (uint32_t k = 0; k < c->n_procs; k++)
      if (!c->procs[k].has_spans && same_process(s, c->procs[k].host, c->procs[k].pid))
        c->procs[k].has_spans = true;
    /* host_health's check names the host when it knows the address: the
     * same gap is not counted twice */
    if (t->missing_spans == 0 && s->kind == HOP_KIND_CLIENT && s->ended &&
        span_reached_server(s) && span_annotation_ns(s, "cr") != 0 && !has_server_child(s) &&
        c->servers_gone++ == 0)
      c->servers_gone_peer = s->peer != NULL ? s->peer : "";
  }
  for (uint32_t k = 0; k < c->n_procs; k++)
    if (!c->procs[k].has_spans && c->procs_gone++ == 0) {
      c->gone_host = c->procs[k].host;
      c->gone_pid = c->procs[k].pid;
    }
  span *root = NULL;
  for (size_t i = 0; i < t->n_roots && root == NULL; i++)
    if (t->roots[i]->parent_id == 0)
      root = t->roots[i];
  if (root == NULL && t->n_roots > 0)
    root = t->roots[0];
  return root != NULL ? tag_root(mem, t, root) : 0;
}
