/* The client's closing summary: a human table on stderr and one
 * machine-readable "SIM-CLIENT key=value ..." line on stdout (launcher,
 * tests and benchmark parse it). Never: change the key names casually. */
#include <stdio.h>

#include "client.h"

static const char *const kind_names[OP_KINDS] = {"write", "read", "stat", "delete"};

void client_report(client *c, double secs, int hung);

void client_report(client *c, double secs, int hung) {
  client_stats *s = &c->st;
  uint64_t ok = 0, failed = 0;
  for (int k = 0; k < OP_KINDS; k++) {
    ok += s->ok[k];
    failed += s->failed[k];
    sim_latency_sort(&s->lat[k]);
  }
  sim_latency_sort(&s->all);
  double ops_s = secs > 0 ? (double)ok / secs : 0;
  uint64_t unsettled = client_unsettled(c);
  fprintf(stderr, "%s: %.1f s, %llu ops ok (%.0f ops/s), %llu failed\n", c->name, secs,
          (unsigned long long)ok, ops_s, (unsigned long long)failed);
  fprintf(stderr, "  %-7s %9s %7s %9s %9s %9s %9s\n", "op", "ok", "failed", "p50 us", "p99 us",
          "p99.9 us", "max us");
  for (int k = 0; k < OP_KINDS; k++)
    fprintf(stderr, "  %-7s %9llu %7llu %9u %9u %9u %9u\n", kind_names[k],
            (unsigned long long)s->ok[k], (unsigned long long)s->failed[k],
            sim_latency_pct(&s->lat[k], 50), sim_latency_pct(&s->lat[k], 99),
            sim_latency_pct(&s->lat[k], 99.9), sim_latency_pct(&s->lat[k], 100));
  fprintf(stderr, "  errors: %llu timeouts, %llu connection, %llu OSD error replies, "
                  "%llu other, %llu with no live OSD; %llu connections dropped\n",
          (unsigned long long)s->timeouts, (unsigned long long)s->conn_errors,
          (unsigned long long)s->peer_errors, (unsigned long long)s->other_errors,
          (unsigned long long)s->no_osd, (unsigned long long)s->drops);
  fprintf(stderr, "  verification: %llu reads/stats verified, %llu FAILED, "
                  "%llu saw a failed write that landed%s\n"
                  "  accounting: %llu issued = %llu answered + %llu failed; "
                  "%llu answered twice, %llu never answered\n",
          (unsigned long long)s->verified, (unsigned long long)s->verify_failures,
          (unsigned long long)s->uncertain_seen, hung ? "; HUNG: answers missing" : "",
          (unsigned long long)c->issued, (unsigned long long)ok, (unsigned long long)failed,
          (unsigned long long)s->duplicates, (unsigned long long)unsettled);
  printf("SIM-CLIENT %s secs=%.2f ops=%llu failed=%llu ops_s=%.1f p50_us=%u p90_us=%u "
         "p99_us=%u p999_us=%u max_us=%u timeouts=%llu conn_errors=%llu peer_errors=%llu "
         "other_errors=%llu no_osd=%llu verified=%llu verify_failures=%llu writes=%llu hung=%d "
         "issued=%llu answered=%llu duplicates=%llu unsettled=%llu reads=%llu stats=%llu "
         "deletes=%llu attempts_failed=%llu failed_over=%llu\n",
         c->name, secs, (unsigned long long)ok, (unsigned long long)failed, ops_s,
         sim_latency_pct(&s->all, 50), sim_latency_pct(&s->all, 90),
         sim_latency_pct(&s->all, 99), sim_latency_pct(&s->all, 99.9),
         sim_latency_pct(&s->all, 100), (unsigned long long)s->timeouts,
         (unsigned long long)s->conn_errors, (unsigned long long)s->peer_errors,
         (unsigned long long)s->other_errors, (unsigned long long)s->no_osd,
         (unsigned long long)s->verified, (unsigned long long)s->verify_failures,
         (unsigned long long)s->ok[OP_WRITE], hung, (unsigned long long)c->issued,
         (unsigned long long)ok, (unsigned long long)s->duplicates,
         (unsigned long long)unsettled, (unsigned long long)s->ok[OP_READ],
         (unsigned long long)s->ok[OP_STAT], (unsigned long long)s->ok[OP_DELETE],
         (unsigned long long)s->attempts_failed, (unsigned long long)s->failed_over);
  fflush(stdout);
}
