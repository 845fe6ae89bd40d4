/* Per-hop blocks, fan-out waits and errors per hop, by operation then
 * contribution (report_hops.h). */
#include "output/report_hops.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hoptrace/error.h"
#include "output/json.h"
#include "output/latency_hist.h"
#include "output/report_critical.h"
#include "output/report_groups.h"
#include "output/utf8.h"
#include "read/event.h"

enum { PH_REQUEST, PH_SERVICE, PH_REPLY, PH_TOTAL };
static const char *const phase_names[] = {"request net+queue", "service",
                                          "reply net+queue", "round trip"};
static const char *const phase_keys[] = {"request", "service", "reply", "round_trip"};

typedef struct hop_row {
  char *label;
  uint32_t op;
  latency_hist phase[4];            /* request, service, reply, round trip */
  uint64_t calls, errors, timeouts; /* client spans; either side's status */
  uint64_t unknown;                 /* calls of traces of unknown p */
  double est;                       /* sum of 1/p over the others' calls */
  double time_ns;                   /* round trip (fan-out: wait), 1/p each */
  double op_e2e_ns; /* the sort key: its operation's e2e_ns, set by ordered() */
} hop_row;

typedef struct hop_op {
  char *name; /* NULL: "(other)" */
  uint64_t traces;
  double w, e2e_ns; /* traces and root durations, 1/p each (unknown p: once) */
} hop_op;

typedef struct table {
  hop_row *rows;
  size_t n;
} table;

struct report_hops {
  table hops, fanout;
  hop_op ops[HOPS_OPS + 1]; /* the last: "(other)" */
  size_t n_ops;
  uint64_t dropped;
  /* the trace being added */
  uint32_t cur_op;
  double cur_w;
};

report_hops *report_hops_new(void) { return calloc(1, sizeof(report_hops)); }

static void table_free(table *t) {
  for (size_t i = 0; i < t->n; i++) {
    free(t->rows[i].label);
    for (int p = 0; p < 4; p++)
      latency_hist_free(&t->rows[i].phase[p]);
  }
  free(t->rows);
}

void report_hops_free(report_hops *h) {
  if (h == NULL)
    return;
  table_free(&h->hops);
  table_free(&h->fanout);
  for (size_t i = 0; i < h->n_ops; i++)
    free(h->ops[i].name);
  free(h);
}

uint64_t report_hops_dropped(const report_hops *h) { return h->dropped; }

static const char *or_unknown(const char *s) { return s ? s : "?"; }

static uint32_t op_for(report_hops *h, const char *name) {
  for (size_t i = 0; i < h->n_ops; i++)
    if (strcmp(h->ops[i].name, name) == 0)
      return (uint32_t)i;
  char *copy = h->n_ops < HOPS_OPS ? strdup(name) : NULL;
  if (copy == NULL)
    return HOPS_OPS;
  h->ops[h->n_ops].name = copy;
  return (uint32_t)h->n_ops++;
}

static hop_row *row_for(report_hops *h, table *t, const char *label) {
  for (size_t i = 0; i < t->n; i++)
    if (t->rows[i].op == h->cur_op && strcmp(t->rows[i].label, label) == 0)
      return &t->rows[i];
  char *copy = h->hops.n + h->fanout.n < HOPS_ROWS ? strdup(label) : NULL;
  hop_row *grown = copy ? realloc(t->rows, (t->n + 1) * sizeof(hop_row)) : NULL;
  if (grown == NULL) {
    free(copy);
    h->dropped++;
    return NULL;
  }
  t->rows = grown;
  hop_row *r = &grown[t->n++];
  memset(r, 0, sizeof(*r));
  r->label = copy;
  r->op = h->cur_op;
  return r;
}

static void push(report_hops *h, latency_hist *l, int64_t v) {
  /* v < 0: clocks of two hosts disagree, not a latency */
  if (latency_hist_add(l, v) < 0)
    h->dropped++;
}

/* Its weight in a sum of times: a trace of unknown p counts once. */
static double time_w(double w) { return w != 0 ? w : 1; }

/* The hop's row, with one call counted: an error when either side's
 * status is set, a timeout when it is HT_ETIMEDOUT. server NULL: the
 * client span has no server span (row "client -> ? operation"). */
static hop_row *count_call(report_hops *h, const span *client, const span *server) {
  char label[256];
  snprintf(label, sizeof(label), "%s -> %s %s", or_unknown(client->service),
           server ? or_unknown(server->service) : "?",
           or_unknown(server ? server->name : client->name));
  hop_row *r = row_for(h, &h->hops, label);
  if (r == NULL)
    return NULL;
  int32_t st = server && server->status != 0 ? server->status : client->status;
  bool timed_out = client->status == HT_ETIMEDOUT || (server && server->status == HT_ETIMEDOUT);
  r->calls++;
  r->est += h->cur_w;
  r->unknown += h->cur_w == 0;
  r->timeouts += timed_out;
  r->errors += st != 0 && !timed_out;
  return r;
}

static void measure_hop(report_hops *h, const span *client, const span *server) {
  hop_row *r = count_call(h, client, server);
  if (r == NULL)
    return;
  int64_t cs = report_mark(client, "cs", 0), cr = report_mark(client, "cr", 1);
  int64_t sr = report_mark(server, "sr", 0), ss = report_mark(server, "ss", 1);
  if (server->started)
    push(h, &r->phase[PH_REQUEST], ns_diff(sr, cs));
  if (server->started && server->ended)
    push(h, &r->phase[PH_SERVICE], ns_diff(ss, sr));
  if (client->ended && server->ended)
    push(h, &r->phase[PH_REPLY], ns_diff(cr, ss));
  if (client->started && client->ended) {
    int64_t rt = ns_diff(cr, cs);
    push(h, &r->phase[PH_TOTAL], rt);
    r->time_ns += rt > 0 ? (double)rt * time_w(h->cur_w) : 0;
  }
}

static void measure_fanout(report_hops *h, const span *server) {
  int64_t first = 0, last = 0;
  size_t n = 0;
  for (size_t i = 0; i < server->n_children; i++) {
    const span *c = server->children[i];
    if (c->kind != HOP_KIND_CLIENT || !c->started || !c->ended)
      continue;
    if (n == 0 || c->start_ns < first)
      first = c->start_ns;
    if (n == 0 || c->end_ns > last)
      last = c->end_ns;
    n++;
  }
  if (n == 0)
    return;
  char label[256];
  snprintf(label, sizeof(label), "%s %s: first child sent -> last child answered",
           or_unknown(server->service), or_unknown(server->name));
  hop_row *r = row_for(h, &h->fanout, label);
  if (r == NULL)
    return;
  int64_t wait = ns_diff(last, first);
  r->calls++;
  r->est += h->cur_w;
  r->unknown += h->cur_w == 0;
  r->time_ns += wait > 0 ? (double)wait * time_w(h->cur_w) : 0;
  push(h, &r->phase[PH_TOTAL], wait);
}

void report_hops_add(report_hops *h, const trace *t) {
  const span *root = cp_root(t);
  h->cur_w = trace_weight(t);
  h->cur_op = op_for(h, root && root->name ? root->name : "?");
  hop_op *op = &h->ops[h->cur_op];
  op->traces++;
  op->w += time_w(h->cur_w);
  int64_t d = root && root->started && root->ended ? span_duration_ns(root) : 0;
  op->e2e_ns += d > 0 ? (double)d * time_w(h->cur_w) : 0;
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    if (s->kind == HOP_KIND_SERVER && s->parent && s->parent->kind == HOP_KIND_CLIENT)
      measure_hop(h, s->parent, s);
    if (s->kind == HOP_KIND_CLIENT) {
      int matched = 0;
      for (size_t c = 0; c < s->n_children; c++)
        matched |= s->children[c]->kind == HOP_KIND_SERVER;
      if (!matched) /* its errors and timeouts still count */
        count_call(h, s, NULL);
    }
    if (s->kind == HOP_KIND_SERVER)
      measure_fanout(h, s);
  }
}

/* ---- order ---- */

/* Operations by e2e time (ties: first seen), then rows by time, then
 * label; the operation's time is copied into each row so that the
 * comparison needs nothing but the two rows. */
static int row_cmp(const void *pa, const void *pb) {
  const hop_row *a = *(const hop_row *const *)pa, *b = *(const hop_row *const *)pb;
  if (a->op != b->op) {
    if (a->op_e2e_ns != b->op_e2e_ns)
      return a->op_e2e_ns > b->op_e2e_ns ? -1 : 1;
    return a->op < b->op ? -1 : 1;
  }
  if (a->time_ns != b->time_ns)
    return a->time_ns > b->time_ns ? -1 : 1;
  return strcmp(a->label, b->label);
}

/* t's rows in the report's order; NULL when out of memory (counted as
 * not kept). */
static const hop_row **ordered(report_hops *h, table *t) {
  const hop_row **rows = malloc((t->n ? t->n : 1) * sizeof(*rows));
  if (rows == NULL) {
    h->dropped += t->n;
    return NULL;
  }
  for (size_t i = 0; i < t->n; i++) {
    t->rows[i].op_e2e_ns = h->ops[t->rows[i].op].e2e_ns;
    rows[i] = &t->rows[i];
  }
  qsort(rows, t->n, sizeof(*rows), row_cmp);
  return rows;
}

static const char *op_name(const report_hops *h, uint32_t op) {
  return h->ops[op].name ? h->ops[op].name : "(other)";
}

static double share(const report_hops *h, const hop_row *r) {
  double e2e = h->ops[r->op].e2e_ns;
  return e2e > 0 ? r->time_ns / e2e : 0;
}

/* ---- text ---- */

static double us(int64_t ns) { return (double)ns / 1000.0; }

static bool row_empty(const hop_row *r) {
  for (int p = 0; p < 4; p++)
    if (r->phase[p].count != 0)
      return false;
  return true;
}

static void print_op(obuf *out, const report_hops *h, uint32_t op) {
  const hop_op *o = &h->ops[op];
  ob_puts(out, "operation ");
  text_escaped(out, op_name(h, op), strlen(op_name(h, op)), false);
  ob_printf(out, ": %" PRIu64 " traces, end-to-end mean %.1f us (1/p each)\n", o->traces,
            o->w > 0 ? o->e2e_ns / o->w / 1000.0 : 0);
}

/* The row's label alone on its line (scripts read it so), then how many
 * it counts, its share, and its errors and timeouts when it had any. */
static void print_label(obuf *out, const report_hops *h, const hop_row *r, const char *what) {
  char est[48];
  report_estimate(est, sizeof(est), r->est, r->calls, r->unknown);
  text_escaped(out, r->label, strlen(r->label), false);
  ob_printf(out, "\n  %s: %" PRIu64 " sampled, est. %s; %.1f %% of the operation's end-to-end"
                 " time", what, r->calls, est, 100.0 * share(h, r));
  if (r->errors)
    ob_printf(out, "; errors: %" PRIu64, r->errors);
  if (r->timeouts)
    ob_printf(out, "; timeouts: %" PRIu64, r->timeouts);
  ob_putc(out, '\n');
}

static void print_rows(obuf *out, report_hops *h, table *t, int first_phase) {
  const hop_row **order = ordered(h, t);
  uint32_t op = UINT32_MAX;
  for (size_t k = 0; order != NULL && k < t->n; k++) {
    const hop_row *r = order[k];
    if (row_empty(r)) /* a client span alone: errors and timeouts only */
      continue;
    if (r->op != op)
      print_op(out, h, op = r->op);
    print_label(out, h, r, first_phase == PH_TOTAL ? "server spans" : "calls");
    for (int p = first_phase; p <= PH_TOTAL; p++) {
      const latency_hist *l = &r->phase[p];
      if (l->count == 0)
        continue;
      ob_printf(out, "  %-20s %8" PRIu64 " %10.1f %10.1f %10.1f %10.1f%s\n",
                first_phase == PH_TOTAL ? "wait" : phase_names[p], l->count,
                us(latency_hist_quantile(l, 0.5)), us(latency_hist_quantile(l, 0.9)),
                us(latency_hist_quantile(l, 0.99)), us(l->max), group_small_mark(l->count));
    }
  }
  free(order);
}

/* Only the hops that failed: a cluster's dozens of healthy hops would
 * hide the one that did not. */
static void print_errors(obuf *out, report_hops *h) {
  table *t = &h->hops;
  size_t failing = 0;
  for (size_t i = 0; i < t->n; i++)
    failing += t->rows[i].errors + t->rows[i].timeouts > 0;
  if (failing == 0) {
    ob_printf(out, "\nErrors and timeouts per hop: no errors (%zu hop(s), none with an error or"
                   " a timeout on either side's status)\n", t->n);
    return;
  }
  ob_printf(out, "\nErrors and timeouts per hop: the %zu of %zu hop(s) that had any (client span"
                 " -> server span; \"?\": no server span), counted on either side's status;"
                 " in the order of Per hop\n", failing, t->n);
  ob_printf(out, "  %-48s %8s %8s %8s  %s\n", "hop", "calls", "errors", "timeouts", "operation");
  const hop_row **order = ordered(h, t);
  for (size_t k = 0; order != NULL && k < t->n; k++) {
    const hop_row *r = order[k];
    if (r->errors + r->timeouts == 0)
      continue;
    ob_puts(out, "  ");
    text_escaped(out, r->label, strlen(r->label), false);
    for (size_t pad = strlen(r->label); pad < 48; pad++)
      ob_putc(out, ' ');
    ob_printf(out, " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 "  ", r->calls, r->errors, r->timeouts);
    text_escaped(out, op_name(h, r->op), strlen(op_name(h, r->op)), false);
    ob_putc(out, '\n');
  }
  free(order);
}

void report_hops_print(report_hops *h, obuf *out) {
  ob_printf(out, "\nPer hop (client span -> server span), microseconds"
                 " (quantiles within 0.4 %%, max exact)\n");
  ob_printf(out, "  by operation (a trace's root span name), the one with the most end-to-end"
                 " time first; in each, its hops by contribution: a hop's round trip summed over"
                 " the operation's calls, as a share of the operation's end-to-end time summed"
                 " (1/p each, unknown p once; a nested hop's time is inside its caller's and"
                 " parallel hops overlap: shares add up to more than 100 %%)\n");
  ob_printf(out, "  (<100: fewer than 100 samples, their p99 is the max; a fan-out server's"
                 " service includes its children's round trips: see Fan-out; calls sampled"
                 " and estimated issued by 1/p as in Built from; errors and timeouts said"
                 " only where there are any)\n");
  ob_printf(out, "  %-20s %8s %10s %10s %10s %10s\n", "phase", "count", "p50", "p90", "p99", "max");
  print_rows(out, h, &h->hops, PH_REQUEST);
  if (h->fanout.n) {
    ob_printf(out, "\nFan-out (server spans that call others), microseconds, in the same order"
                   " (share: the wait summed)\n");
    print_rows(out, h, &h->fanout, PH_TOTAL);
  }
  print_errors(out, h);
}

/* ---- JSON ---- */

static void json_phase(obuf *out, const char *key, const latency_hist *l) {
  ob_printf(out, "\"%s\":{\"count\":%" PRIu64 ",\"p50_ns\":", key, l->count);
  json_i64(out, latency_hist_quantile(l, 0.5));
  ob_puts(out, ",\"p90_ns\":");
  json_i64(out, latency_hist_quantile(l, 0.9));
  ob_puts(out, ",\"p99_ns\":");
  json_i64(out, latency_hist_quantile(l, 0.99));
  ob_puts(out, ",\"max_ns\":");
  json_i64(out, l->max);
  ob_putc(out, '}');
}

static void json_row(obuf *out, const report_hops *h, const hop_row *r, int first_phase) {
  ob_puts(out, "{\"hop\":");
  json_string(out, r->label);
  ob_printf(out, ",\"calls\":%" PRIu64 ",\"calls_unknown_p\":%" PRIu64 ",\"est\":%.1f"
                 ",\"share\":%.6f", r->calls, r->unknown, r->est, share(h, r));
  if (r->errors)
    ob_printf(out, ",\"errors\":%" PRIu64, r->errors);
  if (r->timeouts)
    ob_printf(out, ",\"timeouts\":%" PRIu64, r->timeouts);
  ob_puts(out, ",\"phases\":{");
  int any = 0;
  for (int p = first_phase; p <= PH_TOTAL; p++)
    if (r->phase[p].count != 0) {
      ob_puts(out, any++ ? "," : "");
      json_phase(out, first_phase == PH_TOTAL ? "wait" : phase_keys[p], &r->phase[p]);
    }
  ob_puts(out, "}}");
}

/* [{"operation", "traces", "e2e_ns", "hops": [rows]}...] in print order;
 * a client span alone (no phase) is listed too: its errors. */
static void json_table(obuf *out, report_hops *h, table *t, int first_phase) {
  const hop_row **order = ordered(h, t);
  uint32_t op = UINT32_MAX;
  ob_putc(out, '[');
  for (size_t k = 0; order != NULL && k < t->n; k++) {
    const hop_row *r = order[k];
    if (r->op != op) {
      ob_puts(out, op == UINT32_MAX ? "{\"operation\":" : "]},{\"operation\":");
      op = r->op;
      json_string(out, op_name(h, op));
      ob_printf(out, ",\"traces\":%" PRIu64 ",\"e2e_ns\":%.0f,\"hops\":[", h->ops[op].traces,
                h->ops[op].e2e_ns);
    } else {
      ob_putc(out, ',');
    }
    json_row(out, h, r, first_phase);
  }
  ob_puts(out, op == UINT32_MAX ? "]" : "]}]");
  free(order);
}

void report_hops_json(report_hops *h, obuf *out) {
  ob_puts(out, ",\"hops\":");
  json_table(out, h, &h->hops, PH_REQUEST);
  ob_puts(out, ",\"fanout\":");
  json_table(out, h, &h->fanout, PH_TOTAL);
}
