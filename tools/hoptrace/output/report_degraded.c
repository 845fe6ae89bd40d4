/* Degraded writes per primary (report_degraded.h). */
#include "output/report_degraded.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "output/report_groups.h"
#include "output/utf8.h"
#include "read/event.h"

#define PAIRS_MAX 8

typedef struct ack_pair {
  int64_t acked, planned;
  uint64_t n;
} ack_pair;

typedef struct primary {
  char *label; /* NULL: the "(other)" row */
  uint64_t writes, writes_unknown, degraded, degraded_unknown;
  double writes_est, degraded_est; /* sum of 1/p over those of known p */
  ack_pair pairs[PAIRS_MAX];       /* the degraded ones by "N of M" */
  size_t n_pairs;
  uint64_t pairs_other;
} primary;

struct report_degraded {
  primary *rows;
  size_t n;
  primary other;
};

report_degraded *report_degraded_new(void) { return calloc(1, sizeof(report_degraded)); }

void report_degraded_free(report_degraded *d) {
  if (d == NULL)
    return;
  for (size_t i = 0; i < d->n; i++)
    free(d->rows[i].label);
  free(d->rows);
  free(d);
}

/* An integer key-value (or one written as decimal text) of s. */
static bool int_tag(const span *s, const char *key, int64_t *out) {
  for (size_t i = 0; i < s->n_tags; i++) {
    const tag *g = &s->tags[i];
    if (strcmp(g->key, key) != 0)
      continue;
    if (g->is_int) {
      *out = g->int_value;
      return true;
    }
    char *end;
    long long v = strtoll(g->str_value, &end, 10);
    if (end != g->str_value && *end == '\0') {
      *out = v;
      return true;
    }
  }
  return false;
}

static primary *row_for(report_degraded *d, const char *label) {
  for (size_t i = 0; i < d->n; i++)
    if (strcmp(d->rows[i].label, label) == 0)
      return &d->rows[i];
  if (d->n == GROUPS_MAX)
    return &d->other;
  primary *grown = realloc(d->rows, (d->n + 1) * sizeof(primary));
  if (grown == NULL)
    return NULL;
  d->rows = grown;
  char *copy = strdup(label);
  if (copy == NULL)
    return NULL;
  primary *r = &grown[d->n++];
  memset(r, 0, sizeof(*r));
  r->label = copy;
  return r;
}

static void count_pair(primary *r, int64_t acked, int64_t planned) {
  for (size_t i = 0; i < r->n_pairs; i++)
    if (r->pairs[i].acked == acked && r->pairs[i].planned == planned) {
      r->pairs[i].n++;
      return;
    }
  if (r->n_pairs < PAIRS_MAX)
    r->pairs[r->n_pairs++] = (ack_pair){acked, planned, 1};
  else
    r->pairs_other++;
}

int report_degraded_add(report_degraded *d, const trace *t, double w) {
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    int64_t acked, planned;
    if (s->kind != HOP_KIND_SERVER || !int_tag(s, DEGRADED_ACKED_KEY, &acked) ||
        !int_tag(s, DEGRADED_PLANNED_KEY, &planned))
      continue;
    primary *r = row_for(d, s->service ? s->service : "?");
    if (r == NULL)
      return -1;
    r->writes++;
    r->writes_est += w;
    r->writes_unknown += w == 0;
    if (acked >= planned)
      continue;
    r->degraded++;
    r->degraded_est += w;
    r->degraded_unknown += w == 0;
    count_pair(r, acked, planned);
  }
  return 0;
}

static void print_row(obuf *out, const primary *r) {
  if (r->writes == 0)
    return;
  const char *label = r->label != NULL ? r->label : "(other)";
  char est[48], degraded_est[48];
  report_estimate(est, sizeof(est), r->writes_est, r->writes, r->writes_unknown);
  report_estimate(degraded_est, sizeof(degraded_est), r->degraded_est, r->degraded,
                  r->degraded_unknown);
  ob_puts(out, "  ");
  text_escaped(out, label, strlen(label), false);
  for (size_t pad = strlen(label); pad < 28; pad++)
    ob_putc(out, ' ');
  ob_printf(out, " %8" PRIu64 " %10s %9" PRIu64 " %10s  ", r->writes, est, r->degraded,
            degraded_est);
  for (size_t i = 0; i < r->n_pairs; i++)
    ob_printf(out, "%s%" PRId64 " of %" PRId64 ": %" PRIu64, i ? ", " : "", r->pairs[i].acked,
              r->pairs[i].planned, r->pairs[i].n);
  if (r->pairs_other)
    ob_printf(out, ", other: %" PRIu64, r->pairs_other);
  if (r->degraded == 0)
    ob_puts(out, "-");
  ob_putc(out, '\n');
}

void report_degraded_print(const report_degraded *d, obuf *out) {
  if (d->n == 0) {
    ob_puts(out, "\nDegraded writes per primary: none known (no server span carries "
                 DEGRADED_ACKED_KEY " and " DEGRADED_PLANNED_KEY ")\n");
    return;
  }
  uint64_t writes = d->other.writes, degraded = d->other.degraded;
  for (size_t i = 0; i < d->n; i++) {
    writes += d->rows[i].writes;
    degraded += d->rows[i].degraded;
  }
  if (degraded == 0) { /* a table of zeros would hide nothing worth a look */
    ob_printf(out, "\nDegraded writes per primary: none (%" PRIu64 " write(s) sampled by %zu"
                   " primar%s, each acknowledged by all its replicas)\n",
              writes, d->n + (d->other.writes > 0), d->n + (d->other.writes > 0) == 1 ? "y" : "ies");
    return;
  }
  ob_puts(out, "\nDegraded writes per primary: a write acknowledged with N of M replicas, N < M"
               " (its primary's server span: " DEGRADED_ACKED_KEY " = N, " DEGRADED_PLANNED_KEY
               " = M); sampled, and estimated issued by 1/p as in Built from\n");
  ob_printf(out, "  %-28s %8s %10s %9s %10s  %s\n", "primary", "writes", "est.", "degraded",
            "est.", "degraded: acknowledged with N of M");
  for (size_t i = 0; i < d->n; i++)
    print_row(out, &d->rows[i]);
  print_row(out, &d->other);
}
