/* Flight-recorder input, without a session daemon: copies of events from
 * overlapping snapshots dropped (and only copies), captured traces
 * marked (the root's hoptrace.capture.* tags; a process the notice
 * reached with no span left, an answered call with no server span, a
 * trace with no span at all: partial, saying what is missing), traces
 * recorded and not kept told apart, capture.json read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "assemble/assemble.h"
#include "output/output.h"
#include "read/capture_json.h"
#include "read/dedupe.h"
#include "read/keyed_hash.h"
#include "read/limits.h"
#include "read/trace_dirs.h"

#define MS 1000000ll

static hop_event ev(hop_event_kind kind, int64_t ts, uint64_t trace, uint64_t span,
                    uint64_t parent) {
  hop_event e = {.kind = kind, .ts_ns = ts, .trace_lo = trace, .span_id = span,
                 .parent_id = parent, .vpid = 10, .vtid = 10, .procname = "p",
                 .hostname = "h1", .name = "op", .service = "svc", .endpoint = "",
                 .key = "k", .str_value = "v", .message = "", .peer = ""};
  return e;
}

static void copies_only_are_dropped(void **state) {
  (void)state;
  event_dedupe d = {0};
  hop_event a = ev(HOP_SPAN_SIDE, 100, 1, 1, 0), b = a, c = a, later = a;
  assert_false(event_dedupe_is_copy(&d, &a));
  assert_true(event_dedupe_is_copy(&d, &b)); /* the other snapshot's copy */
  c.str_value = "w";                         /* same time, other content */
  assert_false(event_dedupe_is_copy(&d, &c));
  c.hostname = "h2"; /* another host at the same nanosecond */
  c.str_value = "v";
  assert_false(event_dedupe_is_copy(&d, &c));
  later.ts_ns = 101;
  assert_false(event_dedupe_is_copy(&d, &later));
  assert_true(event_dedupe_is_copy(&d, &later));
  assert_int_equal(d.duplicates, 2);
  /* a capture notice read from two snapshots: babeltrace2 2.0.4 may give
   * its empty origin as an earlier event's string; still one event */
  hop_event n1 = ev(HOP_CAPTURE, 200, 1, 1, 0), n2;
  n1.capture_why = HOP_CAPTURE_NOTICE;
  n1.capture_hops = 1;
  n1.service = "osd.1";
  n2 = n1;
  n2.service = "client.0";
  assert_false(event_dedupe_is_copy(&d, &n1));
  assert_true(event_dedupe_is_copy(&d, &n2));
  n2.capture_hops = 2; /* another notice */
  assert_false(event_dedupe_is_copy(&d, &n2));
  hop_event t1 = n1, t2 = n1; /* triggers' origins are theirs */
  t1.capture_hops = t2.capture_hops = 0;
  t1.capture_why = t2.capture_why = HOP_CAPTURE_SLOW_CLIENT;
  t2.service = "client.0";
  assert_false(event_dedupe_is_copy(&d, &t1));
  assert_false(event_dedupe_is_copy(&d, &t2));
  assert_int_equal(d.duplicates, 3);
  event_dedupe_free(&d);
}

/* A copy need not come next to its original: a stream whose time went
 * back puts the other snapshot's copy after later events; and any
 * number may share one time. */
static void copies_apart_are_dropped(void **state) {
  (void)state;
  event_dedupe d = {0};
  hop_event late = ev(HOP_SPAN_SIDE, 2000, 7, 1, 0), early = ev(HOP_SPAN_SIDE, 1000, 7, 2, 1);
  assert_false(event_dedupe_is_copy(&d, &late));
  assert_false(event_dedupe_is_copy(&d, &early));
  assert_true(event_dedupe_is_copy(&d, &late));
  assert_true(event_dedupe_is_copy(&d, &early));
  hop_event many = ev(HOP_SPAN_SIDE, 3000, 8, 1, 0);
  for (int copy = 0; copy < 2; copy++)
    for (uint64_t span = 1; span <= 5000; span++) {
      many.span_id = span;
      assert_int_equal(event_dedupe_is_copy(&d, &many), copy == 1);
    }
  assert_int_equal(d.duplicates, 5002);
  assert_int_equal(d.unsure, 0);
  event_dedupe_free(&d);
}

/* Past --max-open-spans events remembered, the oldest are forgotten: an
 * event no later than one forgotten passes counted (the run not whole),
 * later ones and copies of those remembered as before. */
static void forgotten_past_the_limit_counted(void **state) {
  (void)state;
  tool_limits saved = ht_limits;
  ht_drops = (tool_drops){0};
  ht_limits.open_spans = 4;
  event_dedupe d = {0};
  hop_event e = ev(HOP_SPAN_SIDE, 0, 9, 1, 0);
  for (int64_t t = 1; t <= 5; t++) { /* the fifth forgets the four before */
    e.ts_ns = t;
    assert_false(event_dedupe_is_copy(&d, &e));
  }
  assert_true(event_dedupe_is_copy(&d, &e)); /* t = 5, remembered */
  e.ts_ns = 6;
  assert_false(event_dedupe_is_copy(&d, &e));
  assert_int_equal(d.unsure, 0);
  assert_false(limits_dropped());
  e.ts_ns = 3; /* back, to a time forgotten: it may be a copy */
  assert_false(event_dedupe_is_copy(&d, &e));
  assert_int_equal(d.unsure, 1);
  assert_int_equal(ht_drops.dedupe_unsure, 1);
  assert_true(limits_dropped());
  assert_int_equal(d.duplicates, 1);
  event_dedupe_free(&d);
  ht_limits = saved;
  ht_drops = (tool_drops){0};
}

/* The copies' hash is SipHash-2-4 (the reference's vectors: key 00..0f,
 * message 00..n-1), fed in any pieces, under a random key a run: a trace
 * cannot be written to make two events collide (FNV-1a's could). */
static void copies_hash_is_keyed(void **state) {
  (void)state;
  const uint64_t key[2] = {0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
  const struct {
    size_t n;
    uint64_t hash;
  } vectors[] = {{0, 0x726fdb47dd0e0e31ull}, {1, 0x74f839c593dc67fdull},
                 {8, 0x93f5f5799a932462ull}, {15, 0xa129ca6149be45e5ull},
                 {63, 0x958a324ceb064572ull}};
  unsigned char msg[63];
  for (size_t i = 0; i < sizeof(msg); i++)
    msg[i] = (unsigned char)i;
  for (size_t v = 0; v < sizeof(vectors) / sizeof(vectors[0]); v++)
    for (size_t piece = 1; piece <= 9; piece += 4) {
      keyed_hash h;
      keyed_hash_init(&h, key);
      for (size_t at = 0; at < vectors[v].n; at += piece)
        keyed_hash_add(&h, msg + at, vectors[v].n - at < piece ? vectors[v].n - at : piece);
      assert_int_equal(keyed_hash_end(&h), vectors[v].hash);
    }
  /* the run's key is not the reference's, and stays for the run */
  hop_event e = ev(HOP_SPAN_SIDE, 100, 1, 1, 0);
  uint64_t run = event_dedupe_hash(&e);
  assert_int_equal(event_dedupe_hash(&e), run);
  keyed_hash h;
  keyed_hash_init(&h, NULL);
  keyed_hash_add(&h, msg, 15);
  assert_int_not_equal(keyed_hash_end(&h), 0xa129ca6149be45e5ull);
}

typedef struct seen {
  int traces;
  uint64_t ids[8];
  int incomplete[8];
  char reason[8][INCOMPLETE_REASON_MAX];
  char tags[8][512]; /* the root's capture tags, "key=value;" */
  bool kept_not_recorded[8];
} seen;

static void on_ready(void *user, const trace *t) {
  seen *s = user;
  int i = s->traces++;
  if (i >= 8)
    return;
  s->ids[i] = t->trace_lo;
  s->incomplete[i] = t->incomplete;
  trace_incomplete_reason(t, s->reason[i], sizeof(s->reason[i]));
  s->tags[i][0] = '\0';
  for (size_t k = 0; k < t->n_spans; k++) {
    const span *sp = t->spans[k];
    for (uint32_t g = 0; g < sp->n_tags; g++) {
      if (strncmp(sp->tags[g].key, "hoptrace.capture.", 17) != 0)
        continue;
      assert_int_equal(sp->parent_id, 0); /* on the root only */
      char one[128];
      if (sp->tags[g].is_int)
        snprintf(one, sizeof(one), "%s=%lld;", sp->tags[g].key + 17,
                 (long long)sp->tags[g].int_value);
      else
        snprintf(one, sizeof(one), "%s=%s;", sp->tags[g].key + 17, sp->tags[g].str_value);
      strncat(s->tags[i], one, sizeof(s->tags[i]) - strlen(s->tags[i]) - 1);
    }
  }
}

static int find(const seen *s, uint64_t id) {
  for (int i = 0; i < s->traces && i < 8; i++)
    if (s->ids[i] == id)
      return i;
  fail_msg("trace %llu not emitted", (unsigned long long)id);
  return -1;
}

static void add(assembler *a, hop_event e) { assert_int_equal(assembler_add(a, &e), 0); }

/* A client span answered by a server span (server false: no server span). */
static void call(assembler *a, int64_t t0, uint64_t trace, bool server) {
  hop_event c = ev(HOP_SPAN_SIDE, t0 + 10, trace, 1, 0);
  c.start_ns = t0;
  c.span_kind = HOP_KIND_CLIENT;
  c.marks_ns[0] = t0 + 1;
  c.marks_ns[3] = t0 + 9;
  c.peer = "tcp://10.0.0.2:6800";
  c.service = "client";
  add(a, c);
  if (!server)
    return;
  hop_event s = ev(HOP_SPAN_SIDE, t0 + 8, trace, 2, 1);
  s.start_ns = t0 + 2;
  s.span_kind = HOP_KIND_SERVER;
  s.hostname = "h2";
  s.vpid = 20;
  s.service = "osd";
  add(a, s);
}

static hop_event capture(int64_t ts, uint64_t trace, uint8_t why, uint8_t hops,
                         const char *host, int64_t pid) {
  hop_event e = ev(HOP_CAPTURE, ts, trace, why == HOP_CAPTURE_MANUAL ? 0 : 1, 0);
  e.capture_why = why;
  e.capture_hops = hops;
  e.capture_threshold = 20 * MS;
  e.capture_value = 25500000;
  e.hostname = host;
  e.vpid = pid;
  e.service = "client";
  return e;
}

static void captured_traces_are_marked(void **state) {
  (void)state;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 10 * MS, 50 * MS);
  /* 1: slow client, the server's process answered the notice: complete */
  call(a, 0, 1, true);
  add(a, capture(20, 1, HOP_CAPTURE_SLOW_CLIENT, 0, "h1", 10));
  add(a, capture(21, 1, HOP_CAPTURE_NOTICE, 1, "h2", 20));
  add(a, capture(22, 1, HOP_CAPTURE_NOTICE, 1, "h2", 20)); /* the same process again */
  /* 2: an error; the server's part gone (answered, no server span), and
   * the notice reached h2 pid 20 which holds nothing of it */
  call(a, 100, 2, false);
  hop_event err = capture(120, 2, HOP_CAPTURE_ERROR, 0, "h1", 10);
  err.capture_value = (uint64_t)(uint32_t)-14;
  add(a, err);
  add(a, capture(121, 2, HOP_CAPTURE_NOTICE, 1, "h2", 20));
  /* 3: by hand, no span of it anywhere */
  add(a, capture(200, 3, HOP_CAPTURE_MANUAL, 0, "h1", 10));
  /* 4: not captured */
  call(a, 300, 4, true);
  assembler_flush(a);
  assert_int_equal(s.traces, 4);
  int t1 = find(&s, 1), t2 = find(&s, 2), t3 = find(&s, 3), t4 = find(&s, 4);
  assert_string_equal(s.tags[t1], "reason=slow-client;threshold_ms=20.000;value_ms=25.500;"
                                  "by=client (host h1, pid 10);hosts=1;");
  assert_false(s.incomplete[t1]);
  assert_string_equal(s.tags[t2], "reason=error;status=-14;by=client (host h1, pid 10);hosts=1;");
  assert_true(s.incomplete[t2]);
  assert_non_null(strstr(s.reason[t2], "1 process(es) the capture notice reached hold none of"
                                       " its spans (overwritten before the notice came), first"
                                       " host h2 pid 20"));
  assert_non_null(strstr(s.reason[t2], "1 server span(s) missing (peer tcp://10.0.0.2:6800)"));
  assert_true(s.incomplete[t3]);
  assert_string_equal(s.reason[t3], "captured, but no span of it in the snapshots (overwritten)");
  assert_string_equal(s.tags[t4], "");
  assert_false(s.incomplete[t4]);
  const assembler_stats *st = assembler_get_stats(a);
  assert_int_equal(st->captured_traces, 3);
  assert_int_equal(st->captured_complete, 1);
  assert_int_equal(st->captured_partial, 2);
  assert_int_equal(st->triggers[HOP_CAPTURE_SLOW_CLIENT], 1);
  assert_int_equal(st->triggers[HOP_CAPTURE_ERROR], 1);
  assert_int_equal(st->triggers[HOP_CAPTURE_MANUAL], 1);
  assert_int_equal(st->notices, 3);
  assembler_free(a);
}

/* Only notices (the firing process's part is not in the input). */
static void notices_alone_say_so(void **state) {
  (void)state;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 10 * MS, 50 * MS);
  call(a, 0, 5, true);
  add(a, capture(20, 5, HOP_CAPTURE_NOTICE, 2, "h2", 20));
  assembler_flush(a);
  assert_int_equal(s.traces, 1);
  assert_string_equal(s.tags[0], "reason=unknown: only capture notices, the process that fired"
                                 " is not in the input;hosts=1;");
  assert_false(s.incomplete[0]);
  assembler_free(a);
}

static bool keep_kept(void *user, const trace *t) {
  (void)user;
  return !trace_recorded_not_kept(t);
}

static void recorded_not_kept_is_declined(void **state) {
  (void)state;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 10 * MS, 50 * MS);
  assembler_set_keep(a, keep_kept, NULL);
  hop_event r = ev(HOP_SPAN_SIDE, 10, 1, 1, 0);
  r.flags = 0x8; /* recorded, not sampled: flight only */
  add(a, r);
  hop_event k = ev(HOP_SPAN_SIDE, 10, 2, 1, 0);
  k.flags = 0x9; /* recorded and kept */
  add(a, k);
  hop_event old = ev(HOP_SPAN_SIDE, 10, 3, 1, 0);
  old.flags = 0x1; /* a recording before flight mode */
  add(a, old);
  hop_event none = ev(HOP_SPAN_SIDE, 10, 4, 1, 0);
  none.flags = 0; /* not sampled, not recorded: older forced traces */
  add(a, none);
  assembler_flush(a);
  assert_int_equal(s.traces, 3);
  find(&s, 2);
  find(&s, 3);
  find(&s, 4);
  const assembler_stats *st = assembler_get_stats(a);
  assert_int_equal(st->declined_traces, 1);
  assert_int_equal(st->traces, 3);
  assembler_free(a);
}

static void capture_json_counters(void **state) {
  (void)state;
  capture_counts c;
  assert_int_equal(capture_json_parse(
                       "{\"triggers_fired\": 12, \"snapshots\":5,\"coalesced\" : 4,"
                       " \"rate_limited\": 3, \"dropped\": 0, \"daemon_dropped_notifications\": 1,"
                       " \"snapshot_failures\": 0, \"trigger_to_snapshot_ms\": {\"p50\": 35.5,"
                       " \"p99\": 210}, \"snapshot_list\": [{\"name\": \"snapshots\"}]}",
                       &c),
                   0);
  assert_int_equal(c.triggers_fired, 12);
  assert_int_equal(c.snapshots, 5);
  assert_int_equal(c.coalesced, 4);
  assert_int_equal(c.rate_limited, 3);
  assert_int_equal(c.dropped, 0);
  assert_int_equal(c.daemon_dropped, 1);
  assert_int_equal(c.snapshot_failures, 0);
  assert_true(c.p50_ms == 35.5 && c.p99_ms == 210);
  assert_int_equal(capture_json_parse("{\"snapshots\": 2}", &c), 0);
  assert_int_equal(c.coalesced, -1);
  assert_true(c.p50_ms < 0);
  assert_int_equal(capture_json_parse("not json", &c), -1);
}

static void snapshot_names(void **state) {
  (void)state;
  assert_true(bt_is_snapshot_name("snapshot-1-20261127-112749-0"));
  assert_true(bt_is_snapshot_name("capture-000012-20261127-112754-11"));
  assert_true(bt_is_snapshot_name("early-20261127-111049-0"));
  assert_false(bt_is_snapshot_name("-20261127-112749-0"));  /* no name before */
  assert_false(bt_is_snapshot_name("sim-20261127-112749")); /* a session's output */
  assert_false(bt_is_snapshot_name("capture-2026112-112749-0"));
  assert_false(bt_is_snapshot_name("capture-20261127-11274x-0"));
  assert_false(bt_is_snapshot_name("64-bit"));
  assert_false(bt_is_snapshot_name(""));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(copies_only_are_dropped),
      cmocka_unit_test(copies_apart_are_dropped),
      cmocka_unit_test(forgotten_past_the_limit_counted),
      cmocka_unit_test(copies_hash_is_keyed),
      cmocka_unit_test(captured_traces_are_marked),
      cmocka_unit_test(notices_alone_say_so),
      cmocka_unit_test(recorded_not_kept_is_declined),
      cmocka_unit_test(capture_json_counters),
      cmocka_unit_test(snapshot_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
