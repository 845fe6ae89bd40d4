/* `hoptrace report`'s roll-ups and what it is built from (report_groups.h). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hoptrace/error.h"
#include "output/report_groups.h"
#include "output/report_spread.h"
#include "output/utf8.h"
#include "read/event.h"

#define P_VALUES_MAX 16 /* distinct probabilities listed; the rest summed */

typedef struct group {
  char *label;
  char *client; /* operations: the roots' service; NULL: several */
  uint64_t n, unknown, errors, timeouts;
  double est; /* sum of 1/p over the samples whose p is known */
  double time_ns; /* latencies, 1/p each (unknown p: once): the row order */
  latency_hist lat;
} group;

typedef struct table {
  group *rows;
  size_t n;
  group other; /* beyond GROUPS_MAX rows; label NULL */
} table;

typedef struct p_count {
  uint64_t p; /* * 2^32 */
  uint64_t n;
} p_count;

struct report_groups {
  table ops, servers;
  p_count ps[P_VALUES_MAX];
  size_t n_ps;
  uint64_t p_other, traces, unknown, unplaced; /* unplaced: no span started */
  uint64_t invalid_p; /* of unknown: roots that recorded a p outside (0, 1] */
  double est, est_other;
  report_spread *spread;
  bool any_time, any_shift;
  int64_t first_ns, last_ns;
  int64_t shift_min, shift_max, bound_max; /* clock corrections applied */
};

report_groups *report_groups_new(void) {
  report_groups *g = calloc(1, sizeof(report_groups));
  if (g != NULL && (g->spread = report_spread_new()) == NULL) {
    free(g);
    return NULL;
  }
  return g;
}

static void table_free(table *t) {
  for (size_t i = 0; i < t->n; i++) {
    free(t->rows[i].label);
    free(t->rows[i].client);
    latency_hist_free(&t->rows[i].lat);
  }
  latency_hist_free(&t->other.lat);
  free(t->rows);
}

void report_groups_free(report_groups *g) {
  if (g == NULL)
    return;
  table_free(&g->ops);
  table_free(&g->servers);
  report_spread_free(g->spread);
  free(g);
}

double trace_weight(const trace *t) {
  uint64_t p = trace_root_prob(t); /* an impossible p is unknown */
  return p != 0 ? 4294967296.0 / (double)p : 0;
}

static group *group_for(table *t, const char *label) {
  for (size_t i = 0; i < t->n; i++)
    if (strcmp(t->rows[i].label, label) == 0)
      return &t->rows[i];
  if (t->n == GROUPS_MAX)
    return &t->other;
  group *grown = realloc(t->rows, (t->n + 1) * sizeof(group));
  if (grown == NULL)
    return NULL;
  t->rows = grown;
  char *copy = strdup(label);
  if (copy == NULL)
    return NULL;
  group *r = &grown[t->n++];
  memset(r, 0, sizeof(*r));
  r->label = copy;
  return r;
}

/* One sample of a trace weighted w (0: unknown), its status and latency. */
static int count(group *r, double w, int32_t status, bool timed_out, int64_t latency,
                 bool has_latency) {
  r->n++;
  r->est += w;
  r->unknown += w == 0;
  if (has_latency && latency > 0)
    r->time_ns += (double)latency * (w != 0 ? w : 1);
  r->timeouts += timed_out;
  r->errors += status != 0 && !timed_out;
  return has_latency ? latency_hist_add(&r->lat, latency) : 0;
}

/* The trace's root: the span with no parent id, else its longest root. */
static const span *root_of(const trace *t) {
  const span *best = NULL;
  for (size_t i = 0; i < t->n_roots; i++) {
    const span *s = t->roots[i];
    if (s->parent_id == 0)
      return s;
    if (best == NULL || span_duration_ns(s) > span_duration_ns(best))
      best = s;
  }
  return best;
}

static void count_p(report_groups *g, uint64_t p, double w) {
  for (size_t i = 0; i < g->n_ps; i++)
    if (g->ps[i].p == p) {
      g->ps[i].n++;
      return;
    }
  if (g->n_ps < P_VALUES_MAX) {
    g->ps[g->n_ps++] = (p_count){p, 1};
  } else {
    g->p_other++;
    g->est_other += w;
  }
}

/* Where the trace goes in the time spread: its first span's start. */
static void place(report_groups *g, const trace *t, double w) {
  bool any = false;
  int64_t first = 0;
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    if (s->started && (!any || s->start_ns < first))
      first = s->start_ns;
    any |= s->started;
  }
  if (any)
    report_spread_add(g->spread, first, w);
  else
    g->unplaced++;
}

static void cover(report_groups *g, const span *s) {
  if (s->started && (!g->any_time || s->start_ns < g->first_ns))
    g->first_ns = s->start_ns;
  if (s->ended && (!g->any_time || s->end_ns > g->last_ns))
    g->last_ns = s->end_ns;
  g->any_time |= s->started && s->ended;
  if (s->clock_bound_ns < 0)
    return;
  if (!g->any_shift || s->clock_shift_ns < g->shift_min)
    g->shift_min = s->clock_shift_ns;
  if (!g->any_shift || s->clock_shift_ns > g->shift_max)
    g->shift_max = s->clock_shift_ns;
  if (!g->any_shift || s->clock_bound_ns > g->bound_max)
    g->bound_max = s->clock_bound_ns;
  g->any_shift = true;
}

int64_t report_mark(const span *s, const char *name, int at_end) {
  int64_t t = span_annotation_ns(s, name);
  if (t != 0)
    return t;
  return at_end ? s->end_ns : s->start_ns;
}

int report_groups_add(report_groups *g, const trace *t) {
  double w = trace_weight(t);
  g->traces++;
  g->est += w;
  g->unknown += w == 0;
  g->invalid_p += trace_root_prob_invalid(t);
  if (w != 0)
    count_p(g, trace_root_prob(t), w);
  place(g, t, w);
  int rc = 0;
  int32_t status = 0;
  bool timed_out = false;
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    cover(g, s);
    timed_out |= s->status == HT_ETIMEDOUT;
    if (s->status != 0)
      status = s->status;
    if (s->kind != HOP_KIND_SERVER)
      continue;
    group *r = group_for(&g->servers, s->service ? s->service : "?");
    if (r == NULL)
      return -1;
    int64_t service = ns_diff(report_mark(s, "ss", 1), report_mark(s, "sr", 0));
    rc |= count(r, w, s->status, s->status == HT_ETIMEDOUT, service,
                s->started && s->ended && service >= 0);
  }
  const span *root = root_of(t);
  if (root == NULL)
    return rc;
  /* named by the root span alone, as per-hop blocks and the critical path
   * name it; the client's service is a column of its own */
  const char *service = root->service ? root->service : "?";
  group *r = group_for(&g->ops, root->name ? root->name : "?");
  if (r == NULL)
    return -1;
  if (r->n == 0 && r->label != NULL && (r->client = strdup(service)) == NULL)
    return -1;
  if (r->client != NULL && strcmp(r->client, service) != 0) {
    free(r->client);
    r->client = NULL;
  }
  rc |= count(r, w, status, timed_out, span_duration_ns(root),
              root->started && root->ended);
  return rc;
}

const char *group_small_mark(uint64_t count) {
  return count < GROUP_SMALL ? "  <100" : "";
}

void report_utc(int64_t ns, char *buf, size_t cap) {
  time_t sec = (time_t)(ns / 1000000000);
  long frac = (long)(ns % 1000000000);
  if (frac < 0) {
    sec--;
    frac += 1000000000;
  }
  struct tm tm;
  char day[32];
  if (gmtime_r(&sec, &tm) == NULL || strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
    snprintf(buf, cap, "%" PRId64 " ns", ns);
  else
    snprintf(buf, cap, "%s.%06ldZ", day, frac / 1000);
}

void report_estimate(char *buf, size_t cap, double est, uint64_t n, uint64_t unknown) {
  if (n > 0 && unknown == n)
    snprintf(buf, cap, "unknown");
  else if (unknown == 0)
    snprintf(buf, cap, "%.0f", est);
  else
    snprintf(buf, cap, ">=%.0f", est + (double)unknown);
}

static double window_s(const report_groups *g) {
  /* in uint64: hostile times may lie anywhere in int64, their span past it */
  return g->any_time && g->last_ns > g->first_ns
             ? (double)((uint64_t)g->last_ns - (uint64_t)g->first_ns) / 1e9
             : 0;
}

/* The traces recorded and issued. Traces of unknown p are never given a
 * weight: the estimate of the others plus each of those once is a lower
 * bound, said "at least". */
static void print_issued(const report_groups *g, obuf *out) {
  ob_printf(out, "  traces recorded: %" PRIu64 "; estimated issued: ", g->traces);
  uint64_t known = g->traces - g->unknown;
  if (g->unknown == 0)
    ob_printf(out, "%.0f (each trace weighted by 1/p, p = the sampling probability its root"
                   " recorded)\n", g->est);
  else if (known == 0)
    ob_printf(out, "unknown (no root recorded its sampling probability; at least the %" PRIu64
                   " recorded)\n", g->traces);
  else
    ob_printf(out, "at least %.0f (%.0f from the %" PRIu64 " traces of known p, each weighted by"
                   " 1/p, p = the sampling probability its root recorded; + %" PRIu64
                   " traces of unknown p, counted once each)\n",
              g->est + (double)g->unknown, g->est, known, g->unknown);
  if (g->unknown)
    ob_printf(out, "  traces whose root recorded no sampling probability: %" PRIu64
                   " (a root a rate-limited sampler let through, a recording before hoptrace"
                   " 0.2.0, or a root never recorded; never taken as p = 1: a count including"
                   " them reads \">=N\", at least N, each of them counted once, or \"unknown\""
                   " when none has a p)\n",
              g->unknown);
  if (g->invalid_p)
    ob_printf(out, "  of those, roots that recorded an impossible sampling probability (outside"
                   " (0, 1], a hostile or corrupt trace; flagged"
                   " hoptrace.sampling.probability.invalid, taken as unknown): %" PRIu64 "\n",
              g->invalid_p);
}

void report_groups_print_source(const report_groups *g, obuf *out, int aligned) {
  ob_printf(out, "Built from\n");
  if (g->any_time) {
    char a[48], b[48];
    report_utc(g->first_ns, a, sizeof(a));
    report_utc(g->last_ns, b, sizeof(b));
    ob_printf(out, "  time window: %s .. %s (%.6f s, first span start to last span end)\n",
              a, b, window_s(g));
  }
  print_issued(g, out);
  ob_printf(out, "  %-22s %10s %18s\n", "sampling probability", "traces", "estimated issued");
  for (size_t i = 0; i < g->n_ps; i++) {
    double p = (double)g->ps[i].p / 4294967296.0;
    ob_printf(out, "  %-22.6g %10" PRIu64 " %18.0f\n", p, g->ps[i].n, (double)g->ps[i].n / p);
  }
  if (g->p_other)
    ob_printf(out, "  %-22s %10" PRIu64 " %18.0f\n", "(other values)", g->p_other, g->est_other);
  if (g->unknown)
    ob_printf(out, "  %-22s %10" PRIu64 " %18s\n", "unknown", g->unknown, "-");
  if (aligned && g->any_shift)
    ob_printf(out, "  clock correction applied to span times: %+.3f .. %+.3f us, bound"
                   " +-%.3f us (per host pair: Clock alignment)\n",
              (double)g->shift_min / 1000.0, (double)g->shift_max / 1000.0,
              (double)g->bound_max / 1000.0);
  else
    ob_printf(out, "  clock correction applied to span times: none (%s)\n",
              aligned ? "one clock" : "one host, or clocks not aligned: --align off");
  if (g->any_time)
    report_spread_print(g->spread, out, g->first_ns, g->last_ns);
  if (g->unplaced)
    ob_printf(out, "  traces with no span started (not in the time spread): %" PRIu64 "\n",
              g->unplaced);
}

/* label escaped, padded to width */
static void cell(obuf *out, const char *label, size_t width) {
  ob_puts(out, "  ");
  text_escaped(out, label, strlen(label), false);
  for (size_t pad = strlen(label); pad < width; pad++)
    ob_putc(out, ' ');
}

/* failing: the table has a row with an error or a timeout; else their
 * columns are left out (the report says "no errors" once, in Errors and
 * timeouts per hop). */
static void print_row(obuf *out, const group *r, double secs, bool failing, bool clients) {
  if (r->n == 0)
    return;
  char est[48], rate[48] = "unknown";
  report_estimate(est, sizeof(est), r->est, r->n, r->unknown);
  if (r->unknown < r->n && secs > 0)
    snprintf(rate, sizeof(rate), "%s%.1f", r->unknown ? ">=" : "",
             (r->est + (double)r->unknown) / secs);
  cell(out, r->label != NULL ? r->label : "(other)", 28);
  if (clients)
    cell(out, r->client != NULL ? r->client : r->label != NULL ? "(several)" : "-", 12);
  ob_printf(out, " %8" PRIu64 " %10s %10s", r->n, est, rate);
  if (failing)
    ob_printf(out, " %7" PRIu64 " %8" PRIu64, r->errors, r->timeouts);
  ob_printf(out, " %10.1f %10.1f %10.1f%s\n", (double)latency_hist_quantile(&r->lat, 0.5) / 1000.0,
            (double)latency_hist_quantile(&r->lat, 0.99) / 1000.0, (double)r->lat.max / 1000.0,
            group_small_mark(r->lat.count));
}

static int by_time(const void *pa, const void *pb) {
  const group *a = *(const group *const *)pa, *b = *(const group *const *)pb;
  if (a->time_ns != b->time_ns)
    return a->time_ns > b->time_ns ? -1 : 1;
  return strcmp(a->label, b->label);
}

/* Rows by their time summed 1/p each, largest first, as the per-hop blocks
 * are; "(other)" last. clients: the operations' client column. */
static void print_table(obuf *out, const table *t, const char *what, double secs, bool clients) {
  bool failing = t->other.errors + t->other.timeouts > 0;
  for (size_t i = 0; i < t->n; i++)
    failing |= t->rows[i].errors + t->rows[i].timeouts > 0;
  ob_printf(out, "  %-28s", what);
  if (clients)
    ob_printf(out, "  %-12s", "client");
  ob_printf(out, " %8s %10s %10s", "sampled", "est.", "est./s");
  if (failing)
    ob_printf(out, " %7s %8s", "errors", "timeouts");
  ob_printf(out, " %10s %10s %10s\n", "p50", "p99", "max");
  const group **order = malloc((t->n ? t->n : 1) * sizeof(*order));
  for (size_t i = 0; order != NULL && i < t->n; i++)
    order[i] = &t->rows[i];
  if (order != NULL) /* out of memory: first-seen order */
    qsort(order, t->n, sizeof(*order), by_time);
  for (size_t i = 0; i < t->n; i++)
    print_row(out, order != NULL ? order[i] : &t->rows[i], secs, failing, clients);
  print_row(out, &t->other, secs, failing, clients);
  free(order);
}

void report_groups_print_rollups(const report_groups *g, obuf *out) {
  double secs = window_s(g);
  ob_printf(out, "\nPer operation (a trace's root span name; client: its service, \"(several)\""
                 " when roots of several services share the name): sampled traces, estimated"
                 " issued (1/p each) and rate over the window, traces with an error or a"
                 " timeout (columns only when any had), duration in microseconds; the operation"
                 " with the most end-to-end time (1/p each) first\n");
  print_table(out, &g->ops, "operation", secs, true);
  ob_printf(out, "\nPer server (server spans): service time sr -> ss in microseconds; a"
                 " server that calls others (Fan-out) includes its children's round trips;"
                 " errors and timeouts columns only when any span had one; the server with the most"
                 " service time (1/p each) first\n");
  print_table(out, &g->servers, "server", secs, false);
}
