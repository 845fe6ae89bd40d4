/* capture.json and the summary of a flight recording (flight_report.h). */
#include "cli/flight_report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int fl_log_add(fl_log *l, const fl_snap *s) {
  int rc = latency_hist_add(&l->latency, (int64_t)(s->latency_ms * 1e6));
  if (l->n == FL_LIST_MAX) {
    l->snaps[l->first] = *s;
    l->first = (l->first + 1) % FL_LIST_MAX;
    l->omitted++;
    return rc;
  }
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    fl_snap *grown = realloc(l->snaps, (cap < FL_LIST_MAX ? cap : FL_LIST_MAX) * sizeof(*grown));
    if (grown == NULL)
      return -1;
    l->snaps = grown;
    l->cap = cap < FL_LIST_MAX ? cap : FL_LIST_MAX;
  }
  l->snaps[l->n++] = *s;
  return rc;
}

void fl_log_free(fl_log *l) {
  free(l->snaps);
  l->snaps = NULL;
  l->n = l->cap = l->first = 0;
  latency_hist_free(&l->latency);
}

/* p50, p99 (within 0.4 %) and max of every written snapshot's latency,
 * ms; 0 when none. */
static void quantiles(const fl_log *l, double q[3]) {
  q[0] = (double)latency_hist_quantile(&l->latency, 0.50) / 1e6;
  q[1] = (double)latency_hist_quantile(&l->latency, 0.99) / 1e6;
  q[2] = l->latency.count ? (double)l->latency.max / 1e6 : 0;
}

/* JSON string body: the names are ours, but the failure text is lttng's. */
static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

int fl_report_write(const char *path, const fl_policy *p, const fl_log *l) {
  FILE *f = fopen(path, "w");
  if (f == NULL)
    return -1;
  double q[3];
  quantiles(l, q);
  char discarded[32] = "unknown (no daemon to ask)";
  if (l->tracer_discarded >= 0)
    snprintf(discarded, sizeof(discarded), "%lld", l->tracer_discarded);
  fprintf(f,
          "{\"triggers_fired\":%llu,\"snapshots\":%llu,\"coalesced\":%llu,"
          "\"rate_limited\":%llu,\"dropped\":%llu,\"daemon_dropped_notifications\":%llu,"
          "\"tracer_discarded_notifications\":%lld,"
          "\"snapshot_failures\":%llu,\"last_failure\":",
          (unsigned long long)p->fired, (unsigned long long)p->snapshots,
          (unsigned long long)p->coalesced, (unsigned long long)p->rate_limited,
          (unsigned long long)p->dropped, (unsigned long long)l->daemon_dropped,
          l->tracer_discarded, (unsigned long long)p->failures);
  json_str(f, l->last_failure);
  fprintf(f,
          ",\"notification_channel_lost\":%s,\"seconds\":%.3f,"
          "\"trigger_to_snapshot_ms\":{\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f},"
          "\"snapshot_list_omitted\":%llu,\"snapshot_list\":[",
          l->channel_lost ? "true" : "false", l->seconds, q[0], q[1], q[2],
          (unsigned long long)l->omitted);
  for (size_t i = 0; i < l->n; i++) {
    const fl_snap *s = &l->snaps[(l->first + i) % (l->cap ? l->cap : 1)];
    fprintf(f, "%s\n {\"name\":", i ? "," : "");
    json_str(f, s->name);
    fprintf(f,
            ",\"at_ns\":%lld,\"written_ns\":%lld,\"start_mono_ns\":%lld,\"triggers\":%llu,"
            "\"latency_ms\":%.3f,\"traces\":[",
            (long long)s->at_ns, (long long)s->written_ns, (long long)s->start_mono_ns,
            (unsigned long long)s->triggers, s->latency_ms);
    for (unsigned k = 0; k < s->ntraces; k++)
      fprintf(f, "%s{\"trace\":\"%016llx%016llx\",\"why\":%u}", k ? "," : "",
              (unsigned long long)s->traces[k].hi, (unsigned long long)s->traces[k].lo,
              s->traces[k].why);
    fprintf(f, "],\"traces_more\":%llu}", (unsigned long long)s->more_traces);
  }
  fprintf(f,
          "],\n\"ring_bytes_per_cpu\":%llu,\"names_ring_bytes_per_cpu\":%llu,"
          "\"memory_bytes\":%llu,\"snapshot_max_bytes\":%llu}\n",
          (unsigned long long)l->ring_bytes, (unsigned long long)l->names_ring_bytes,
          (unsigned long long)l->memory_bytes,
          (unsigned long long)l->snapshot_max);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    if (errno == 0)
      errno = EIO;
    return -1;
  }
  return 0;
}

void fl_report_summary(FILE *f, const fl_policy *p, const fl_log *l, const char *where) {
  double q[3];
  quantiles(l, q);
  char discarded[32] = "unknown (no daemon to ask)";
  if (l->tracer_discarded >= 0)
    snprintf(discarded, sizeof(discarded), "%lld", l->tracer_discarded);
  fprintf(f,
          "hoptrace: flight recorder: %llu triggers fired in %.1f s; %llu snapshots written "
          "to %s (%llu triggers coalesced into them, %llu waited for the rate limit), "
          "%llu dropped (waited too long, or their snapshot failed), %llu snapshots "
          "failed%s%s%s; the daemon dropped notifications %llu times, the tracers "
          "discarded %s%s; trigger to "
          "snapshot written p50 %.1f ms, p99 %.1f ms, max %.1f ms; ring %llu bytes a CPU "
          "(names %llu), %llu bytes of memory per traced user\n",
          (unsigned long long)p->fired, l->seconds, (unsigned long long)p->snapshots, where,
          (unsigned long long)p->coalesced, (unsigned long long)p->rate_limited,
          (unsigned long long)p->dropped, (unsigned long long)p->failures,
          l->last_failure[0] ? " (last: " : "", l->last_failure,
          l->last_failure[0] ? ")" : "", (unsigned long long)l->daemon_dropped,
          discarded,
          l->channel_lost ? "; the notification channel closed early (daemon gone?)" : "",
          q[0], q[1], q[2], (unsigned long long)l->ring_bytes,
          (unsigned long long)l->names_ring_bytes,
          (unsigned long long)l->memory_bytes);
}
