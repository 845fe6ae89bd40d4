/* `hoptrace diff`'s text and JSON (diff_print.h). */
#include "diff/diff_print.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "output/json.h"
#include "output/report_groups.h"
#include "output/utf8.h"

/* ns as a person reads it: "+10.1 ms", "850 us", "-12 ns" */
static const char *fmt_time(char *buf, size_t cap, double ns, int sign) {
  const char *plus = sign && ns >= 0 ? "+" : "";
  double a = fabs(ns);
  if (isnan(ns))
    snprintf(buf, cap, "-");
  else if (a >= 1e6)
    snprintf(buf, cap, "%s%.*f ms", plus, a >= 1e8 ? 0 : 1, ns / 1e6);
  else if (a >= 1e3)
    snprintf(buf, cap, "%s%.*f us", plus, a >= 1e5 ? 0 : 1, ns / 1e3);
  else
    snprintf(buf, cap, "%s%.0f ns", plus, ns);
  return buf;
}

/* "+10.1 ms at p50 (95% CI +9.9 ms to +10.4 ms)" */
static void fmt_change(char *buf, size_t cap, const diff_est *e, const char *at) {
  char d[32], lo[32], hi[32];
  snprintf(buf, cap, "%s at %s (95%% CI %s to %s)", fmt_time(d, sizeof(d), e->delta, 1), at,
           fmt_time(lo, sizeof(lo), e->lo, 1), fmt_time(hi, sizeof(hi), e->hi, 1));
}

/* "osd.0 -> osd.3 replica_write" or "osd.3 replica_write" */
static void fmt_hop(char *buf, size_t cap, const diff_key *k) {
  if (k->server != NULL)
    snprintf(buf, cap, "%s -> %s %s", k->service, k->server, k->name);
  else
    snprintf(buf, cap, "%s %s", k->service, k->name);
}

void diff_headline(const diff_result *r, char *buf, size_t cap) {
  char hop[512], c50[128], c99[128], mean[32];
  if (r->culprit == NULL) {
    const diff_op *o = r->n_ops ? &r->ops[0] : NULL;
    if (o == NULL) {
      snprintf(buf, cap, "nothing to compare: no trace with a root in one of the groups");
      return;
    }
    fmt_change(c99, sizeof(c99), &o->e2e.p99, "p99");
    snprintf(buf, cap,
             "no hop's phase changed significantly at 95 %% (%zu changes tested); %s end to "
             "end: %s",
             r->tests, o->name, c99);
    return;
  }
  const diff_row *x = r->culprit;
  fmt_hop(hop, sizeof(hop), x->key);
  fmt_change(c50, sizeof(c50), &x->p50, "p50");
  fmt_change(c99, sizeof(c99), &x->p99, "p99");
  snprintf(buf, cap, "%s: %s %s, %s; %.0f%% of %s's end-to-end change (mean %s)", hop,
           cp_phase_names[x->key->phase], c50, c99, 100 * x->share, r->culprit_op->name,
           fmt_time(mean, sizeof(mean), r->culprit_op->e2e.contrib_ns, 1));
}

static void text_row(obuf *out, const diff_row *x, const char *what) {
  char c[32], d50[32], l50[32], h50[32], d99[32], l99[32], h99[32];
  ob_printf(out, "  %10s %6.1f%% %c %10s [%s, %s] %10s [%s, %s] %6" PRIu64 " %6" PRIu64 "  ",
            fmt_time(c, sizeof(c), x->contrib_ns, 1), 100 * x->share,
            x->significant ? '*' : x->tested ? ' ' : '?',
            fmt_time(d50, sizeof(d50), x->p50.delta, 1), fmt_time(l50, sizeof(l50), x->p50.lo, 1),
            fmt_time(h50, sizeof(h50), x->p50.hi, 1), fmt_time(d99, sizeof(d99), x->p99.delta, 1),
            fmt_time(l99, sizeof(l99), x->p99.lo, 1), fmt_time(h99, sizeof(h99), x->p99.hi, 1),
            x->n_a, x->n_b);
  /* names come from the traced processes: never raw to a terminal */
  text_escaped(out, what, strlen(what), false);
  ob_putc(out, '\n');
}

void diff_print_text(const diff_result *r, const diff_side_info *a, const diff_side_info *b,
                     obuf *out) {
  char line[2048];
  diff_headline(r, line, sizeof(line));
  text_escaped(out, line, strlen(line), false);
  const diff_side_info *sides[2] = {a, b};
  for (int i = 0; i < 2; i++) {
    ob_puts(out, i ? "\nB: " : "\n\nA: ");
    text_escaped(out, sides[i]->label, strlen(sides[i]->label), false);
    ob_printf(out, " (%zu traces)", sides[i]->traces);
  }
  ob_putc(out, '\n');
  ob_printf(out,
            "Bootstrap: %u resamples, seed %" PRIu64 "; intervals 95 %%; * significant: beyond "
            "zero at 95 %% for all %zu changes together (Bonferroni); a p50 is tested with %d "
            "traces a side or more (? fewer), a p99 with %d.\nPhases are times on the critical path, over the traces where the phase is on "
            "it; a contribution is the change of its mean per trace, and an operation's add up "
            "to the change of its mean end-to-end time.\n",
            r->resamples, r->seed, r->tests, DIFF_MIN_SAMPLES, GROUP_SMALL);
  for (size_t i = 0; i < r->n_ops; i++) {
    const diff_op *o = &r->ops[i];
    char ma[32], mb[32], a50[32], b50[32], a99[32], b99[32];
    ob_puts(out, "\nOperation ");
    text_escaped(out, o->name, strlen(o->name), false);
    ob_printf(out, ": A %" PRIu64 " traces, B %" PRIu64
                   "; end to end p50 %s -> %s, p99 %s -> %s, mean %s -> %s\n",
              o->n_a, o->n_b, fmt_time(a50, sizeof(a50), o->e2e.p50.a, 0),
              fmt_time(b50, sizeof(b50), o->e2e.p50.b, 0),
              fmt_time(a99, sizeof(a99), o->e2e.p99.a, 0),
              fmt_time(b99, sizeof(b99), o->e2e.p99.b, 0), fmt_time(ma, sizeof(ma), o->mean_a, 0),
              fmt_time(mb, sizeof(mb), o->mean_b, 0));
    ob_puts(out, "  contribution  share   change p50 [95% CI]          change p99 [95% CI]"
                 "       traces A/B  hop: phase\n");
    text_row(out, &o->e2e, "end to end");
    for (size_t k = 0; k < o->n_rows; k++) {
      const diff_row *x = &o->rows[k];
      char hop[512], what[600];
      fmt_hop(hop, sizeof(hop), x->key);
      snprintf(what, sizeof(what), "%s: %s", hop, cp_phase_names[x->key->phase]);
      text_row(out, x, what);
    }
  }
}

static void json_num(obuf *out, double v) {
  if (isfinite(v))
    ob_printf(out, "%.17g", v);
  else
    ob_puts(out, "null");
}

static void json_est(obuf *out, const char *name, const diff_est *e) {
  const char *keys[] = {"a_ns", "b_ns", "change_ns", "ci95_ns", "p"};
  const double values[] = {e->a, e->b, e->delta, e->lo, e->p};
  ob_printf(out, "\"%s\":{", name);
  for (size_t i = 0; i < 5; i++) {
    ob_printf(out, "%s\"%s\":%s", i ? "," : "", keys[i], i == 3 ? "[" : "");
    json_num(out, values[i]);
    if (i == 3) { /* the interval: [lo, hi] */
      ob_putc(out, ',');
      json_num(out, e->hi);
      ob_putc(out, ']');
    }
  }
  ob_putc(out, '}');
}

static void json_row(obuf *out, const diff_row *x, const char *op) {
  ob_putc(out, '{');
  if (x->key != NULL) {
    ob_puts(out, "\"service\":");
    json_string(out, x->key->service);
    ob_puts(out, ",\"server\":");
    if (x->key->server)
      json_string(out, x->key->server);
    else
      ob_puts(out, "null");
    ob_puts(out, ",\"operation\":");
    json_string(out, x->key->name);
    ob_puts(out, ",\"phase\":");
    json_string(out, cp_phase_names[x->key->phase]);
    ob_putc(out, ',');
  }
  if (op != NULL) {
    ob_puts(out, "\"of\":");
    json_string(out, op);
    ob_putc(out, ',');
  }
  ob_printf(out, "\"a_traces\":%" PRIu64 ",\"b_traces\":%" PRIu64 ",", x->n_a, x->n_b);
  json_est(out, "p50", &x->p50);
  ob_putc(out, ',');
  json_est(out, "p99", &x->p99);
  ob_puts(out, ",\"contribution_ns\":");
  json_num(out, x->contrib_ns);
  ob_puts(out, ",\"share\":");
  json_num(out, x->share);
  ob_printf(out, ",\"p50_tested\":%s,\"p99_tested\":%s,\"significant\":%s}",
            x->tested ? "true" : "false", x->tested_p99 ? "true" : "false",
            x->significant ? "true" : "false");
}

static void json_side(obuf *out, const diff_side_info *s) {
  ob_puts(out, "{\"label\":");
  json_string(out, s->label);
  ob_printf(out, ",\"traces\":%zu,\"recording_traces\":%zu,\"no_root\":%" PRIu64
                 ",\"not_kept\":%" PRIu64 ",\"unknown_p\":%" PRIu64 "}",
            s->traces, s->set->n, s->set->no_root, s->set->dropped, s->set->unknown_p);
}

void diff_print_json(const diff_result *r, const diff_side_info *a, const diff_side_info *b,
                     obuf *out) {
  char line[2048];
  diff_headline(r, line, sizeof(line));
  ob_puts(out, "{\"headline\":");
  json_string(out, line);
  ob_puts(out, ",\"a\":");
  json_side(out, a);
  ob_puts(out, ",\"b\":");
  json_side(out, b);
  ob_printf(out, ",\"bootstrap\":{\"resamples\":%u,\"seed\":%" PRIu64
                 ",\"confidence\":0.95},\"tests\":%zu,\"culprit\":",
            r->resamples, r->seed, r->tests);
  if (r->culprit != NULL)
    json_row(out, r->culprit, r->culprit_op->name);
  else
    ob_puts(out, "null");
  ob_puts(out, ",\"operations\":[");
  for (size_t i = 0; i < r->n_ops; i++) {
    const diff_op *o = &r->ops[i];
    ob_puts(out, i ? ",{\"operation\":" : "{\"operation\":");
    json_string(out, o->name);
    ob_printf(out, ",\"a_traces\":%" PRIu64 ",\"b_traces\":%" PRIu64 ",\"mean_a_ns\":", o->n_a,
              o->n_b);
    json_num(out, o->mean_a);
    ob_puts(out, ",\"mean_b_ns\":");
    json_num(out, o->mean_b);
    ob_puts(out, ",\"end_to_end\":");
    json_row(out, &o->e2e, NULL);
    ob_puts(out, ",\"rows\":[");
    for (size_t k = 0; k < o->n_rows; k++) {
      if (k)
        ob_putc(out, ',');
      json_row(out, &o->rows[k], NULL);
    }
    ob_puts(out, "]}");
  }
  ob_puts(out, "]}\n");
}
