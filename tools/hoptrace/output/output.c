/* What every format shares (output.h): the reason a trace is incomplete,
 * in the same words in every output. Must never write to the output
 * itself, nor know which format asks. */
#include "output/output.h"
#include "output/report_groups.h"

#include <stdio.h>

const char *root_sampling_probability(const trace *t, const span *s, char *buf,
                                      size_t cap) {
  if (trace_root_prob(t) == 0 || s->parent_id != 0)
    return NULL;
  snprintf(buf, cap, "%.10g", (double)t->root_prob / 4294967296.0);
  return buf;
}

const char *root_sampling_probability_invalid(const trace *t, const span *s, char *buf,
                                              size_t cap) {
  if (!trace_root_prob_invalid(t) || s->parent_id != 0)
    return NULL;
  if (t->root_prob == ROOT_PROB_ZERO)
    snprintf(buf, cap, "0");
  else
    snprintf(buf, cap, "%.10g", (double)t->root_prob / 4294967296.0);
  return buf;
}

const char *span_unfinished(const span *s, char *buf, size_t cap) {
  if (s->started && s->ended)
    return NULL;
  snprintf(buf, cap, "%s%s%s", s->parent_id == 0 ? "unfinished root: " : "",
           !s->started ? "never started: shown from the earliest time known for it" : "",
           !s->ended ? (!s->started ? "; never ended" : "never ended") : "");
  return buf;
}

const char *trace_incomplete_reason(const trace *t, char *buf, size_t cap) {
  buf[0] = '\0';
  size_t n = 0;
  if (t->orphans)
    n += (size_t)snprintf(buf + n, cap - n, "%zu span(s) without parent; ", t->orphans);
  if (t->unfinished && n < cap)
    n += (size_t)snprintf(buf + n, cap - n, "%zu span(s) unfinished; ", t->unfinished);
  if (t->lossy && n < cap)
    n += (size_t)snprintf(buf + n, cap - n, "LTTng discarded events%s%s; ",
                          t->lossy_host ? " on host " : "", t->lossy_host ? t->lossy_host : "");
  if (t->timed_out && n < cap)
    n += (size_t)snprintf(buf + n, cap - n, "timed out; ");
  if (t->missing_spans && n < cap)
    n += (size_t)snprintf(buf + n, cap - n, "%u server span(s) missing from host %s; ",
                          t->missing_spans, t->missing_host ? t->missing_host : "?");
  if (t->dropped_spans && n < cap)
    n += (size_t)snprintf(buf + n, cap - n, "%u span event(s) dropped past --max-trace-spans; ",
                          t->dropped_spans);
  char when[40];
  if (t->unreceived && t->end_unchecked && n < cap) {
    report_utc(t->end_last_ns, when, sizeof(when));
    n += (size_t)snprintf(buf + n, cap - n,
                          "the live session of host %s ended at %s (its last event received),"
                          " its end unchecked without --relay-dir: spans after it may be"
                          " missing; ", t->unreceived_host, when);
  } else if (t->unreceived && n < cap)
    n += (size_t)snprintf(buf + n, cap - n,
                          "the live session of host %s ended uncleanly: %u event(s) the relay"
                          " holds never received; ", t->unreceived_host, t->unreceived);
  if (t->malformed_events && n < cap)
    n += (size_t)snprintf(buf + n, cap - n, "%u malformed event(s) dropped; ",
                          t->malformed_events);
  const capture_info *c = t->capture;
  if (c != NULL && t->n_spans == 0 && n < cap)
    n += (size_t)snprintf(buf + n, cap - n,
                          "captured, but no span of it in the snapshots (overwritten); ");
  if (c != NULL && c->procs_gone && n < cap)
    n += (size_t)snprintf(buf + n, cap - n,
                          "%u process(es) the capture notice reached hold none of its spans"
                          " (overwritten before the notice came), first host %s pid %d; ",
                          c->procs_gone, c->gone_host[0] ? c->gone_host : "?", (int)c->gone_pid);
  if (c != NULL && c->servers_gone && n < cap)
    n += (size_t)snprintf(buf + n, cap - n, "%u server span(s) missing (peer %s); ",
                          c->servers_gone, c->servers_gone_peer[0] ? c->servers_gone_peer : "?");
  if (n >= 2 && n < cap)
    buf[n - 2] = '\0';
  return buf;
}
