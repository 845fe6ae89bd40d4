/* Schema 2's names (read/names.c): tables per (host, vpid), entries
 * written again replace the old ones, unknown ids are counted and leave
 * the span unnamed, frames become cs/cr or sr/ss, and a process event
 * names every event of its process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "read/limits.h"
#include "read/names.h"

static hop_event table(hop_event_kind kind, const char *host, int64_t vpid, uint32_t id,
                       const char *text) {
  hop_event e = {.kind = kind, .hostname = host, .vpid = vpid, .procname = ""};
  if (kind == HOP_DESC) {
    e.desc_id = id;
    e.span_kind = 2; /* server */
    e.name = text;
    e.service = "svc";
    e.endpoint = "";
  } else if (kind == HOP_PEER) {
    e.peer_id = id;
    e.peer = text;
  } else {
    e.procname = text;
  }
  return e;
}

static hop_event side(const char *host, int64_t vpid, uint32_t desc, uint32_t peer,
                      uint8_t frames) {
  return (hop_event){.kind = HOP_SPAN_SIDE, .hostname = host, .vpid = vpid,
                     .procname = "", .desc_id = desc, .peer_id = peer,
                     .frames = frames, .span_id = 1, .trace_lo = 1};
}

static void put(names *n, hop_event e) { assert_int_equal(names_apply(n, &e), 0); }

static int n_collected;
static char collected_name[32], collected_peer[32];
static int collect(void *arg, const hop_event *ev) {
  (void)arg;
  n_collected++;
  snprintf(collected_name, sizeof(collected_name), "%s", ev->name);
  snprintf(collected_peer, sizeof(collected_peer), "%s", ev->peer);
  return 0;
}

static void ids_resolve_per_host_and_process(void **state) {
  (void)state;
  names *n = names_new();
  assert_non_null(n);
  put(n, table(HOP_PROCESS, "h1", 10, 0, "osd.1"));
  put(n, table(HOP_DESC, "h1", 10, 1, "osd_write"));
  put(n, table(HOP_PEER, "h1", 10, 1, "tcp://10.0.0.2:5000"));
  put(n, table(HOP_PROCESS, "h2", 10, 0, "osd.2"));
  put(n, table(HOP_DESC, "h2", 10, 1, "osd_read")); /* same pid elsewhere */

  hop_event e = side("h1", 10, 1, 1, 3);
  assert_int_equal(names_apply(n, &e), 1);
  assert_string_equal(e.name, "osd_write");
  assert_string_equal(e.service, "svc");
  assert_int_equal(e.span_kind, 2);
  assert_string_equal(e.peer, "tcp://10.0.0.2:5000");
  assert_string_equal(e.annotation, "sr");
  assert_string_equal(e.end_annotation, "ss");
  assert_string_equal(e.procname, "osd.1");

  e = side("h2", 10, 1, 0, 1); /* no end frame: no "ss" */
  assert_int_equal(names_apply(n, &e), 1);
  assert_string_equal(e.name, "osd_read");
  assert_string_equal(e.peer, "");
  assert_string_equal(e.end_annotation, "");
  assert_int_equal(names_unresolved(n), 0);

  /* written again (tracing re-enabled): the new text wins */
  put(n, table(HOP_DESC, "h1", 10, 1, "osd_write2"));
  e = side("h1", 10, 1, 1, 3);
  names_apply(n, &e);
  assert_string_equal(e.name, "osd_write2");

  /* unknown ids: held until the tables come (a live viewer attached
   * late), or NAMES_HOLD_NS, or the end; then unnamed and counted.
   * Another process's tables do not apply. */
  e = side("h1", 11, 1, 0, 3);
  e.ts_ns = 1000;
  assert_int_equal(names_apply(n, &e), 0);
  e = side("h1", 10, 1, 99, 3);
  e.ts_ns = 2000;
  assert_int_equal(names_apply(n, &e), 0);
  assert_false(names_waiting(n, 1000 + NAMES_HOLD_NS));
  assert_int_equal(names_release(n, 3000, false, collect, NULL), 0);
  assert_int_equal(n_collected, 0);
  put(n, table(HOP_PEER, "h1", 10, 99, "tcp://late:1")); /* now known */
  assert_int_equal(names_release(n, 3000, false, collect, NULL), 0);
  assert_int_equal(n_collected, 1);
  assert_string_equal(collected_name, "osd_write2");
  assert_string_equal(collected_peer, "tcp://late:1");
  assert_true(names_waiting(n, 1001 + NAMES_HOLD_NS));
  assert_int_equal(names_release(n, 1001 + NAMES_HOLD_NS, false, collect, NULL), 0);
  assert_int_equal(n_collected, 2);
  assert_string_equal(collected_name, "");
  assert_int_equal(names_unresolved(n), 1);
  e = side("h1", 12, 1, 0, 3); /* and at the end, every one */
  assert_int_equal(names_apply(n, &e), 0);
  assert_int_equal(names_release(n, 0, true, collect, NULL), 0);
  assert_int_equal(n_collected, 3);
  assert_int_equal(names_unresolved(n), 2);

  /* a schema 1 event of a named process gets its name */
  hop_event old = {.kind = HOP_SPAN_START, .hostname = "h1", .vpid = 10, .procname = ""};
  assert_int_equal(names_apply(n, &old), 1);
  assert_string_equal(old.procname, "osd.1");
  names_free(n);
}

/* Many entries: the table grows and keeps every one. */
static void many_entries_are_kept(void **state) {
  (void)state;
  names *n = names_new();
  char text[32];
  put(n, table(HOP_PROCESS, "h", 7, 0, "osd.7"));
  for (uint32_t i = 1; i <= 5000; i++) {
    snprintf(text, sizeof(text), "op%u", i);
    put(n, table(HOP_DESC, "h", 7, i, text));
  }
  for (uint32_t i = 1; i <= 5000; i += 499) {
    hop_event e = side("h", 7, i, 0, 0);
    names_apply(n, &e);
    snprintf(text, sizeof(text), "op%u", i);
    assert_string_equal(e.name, text);
  }
  assert_int_equal(names_unresolved(n), 0);
  names_free(n);
}

/* A flight recorder's ring may hold a span side before its process's
 * table, written again a moment later: the side waits for it as for its
 * names, then gets the process's name; past NAMES_HOLD_NS it goes
 * without. */
static void a_side_waits_for_its_process(void **state) {
  (void)state;
  names *n = names_new();
  n_collected = 0;
  put(n, table(HOP_DESC, "h", 5, 1, "osd_write"));
  hop_event e = side("h", 5, 1, 0, 3);
  e.ts_ns = 1000;
  assert_int_equal(names_apply(n, &e), 0);
  assert_int_equal(names_release(n, 2000, false, collect, NULL), 0);
  assert_int_equal(n_collected, 0);
  put(n, table(HOP_PROCESS, "h", 5, 0, "osd.5"));
  assert_int_equal(names_release(n, 2000, false, collect, NULL), 0);
  assert_int_equal(n_collected, 1);
  assert_string_equal(collected_name, "osd_write");
  e = side("h", 6, 1, 0, 3); /* no process table ever: goes unnamed, in time */
  e.ts_ns = 1000;
  put(n, table(HOP_DESC, "h", 6, 1, "osd_read"));
  assert_int_equal(names_apply(n, &e), 0);
  assert_int_equal(names_release(n, 1001 + NAMES_HOLD_NS, false, collect, NULL), 0);
  assert_int_equal(n_collected, 2);
  assert_string_equal(collected_name, "osd_read");
  assert_int_equal(names_unresolved(n), 0);
  names_free(n);
}

/* A host longer than --max-string is kept cut, and found again under
 * its full name: its names are cut like any string, not lost. */
static void a_long_host_keeps_its_names(void **state) {
  (void)state;
  uint64_t string_bytes = ht_limits.string_bytes, cut = ht_drops.strings;
  ht_limits.string_bytes = 2;
  names *n = names_new();
  put(n, table(HOP_PROCESS, "longhost", 3, 0, "osd.3"));
  put(n, table(HOP_DESC, "longhost", 3, 1, "op"));
  put(n, table(HOP_DESC, "longhost", 3, 1, "op")); /* written again: replaces */
  hop_event e = side("longhost", 3, 1, 0, 3);
  assert_int_equal(names_apply(n, &e), 1);
  assert_string_equal(e.name, "op");
  assert_string_equal(e.procname, "os");
  assert_int_equal(names_unresolved(n), 0);
  assert_true(ht_drops.strings > cut); /* the cut counted */
  names_free(n);
  ht_limits.string_bytes = string_bytes;
}

/* Times far apart (a clock offset below zero, a time near the end of
 * int64): a held side has waited, without a signed overflow. */
static void far_apart_times_release(void **state) {
  (void)state;
  names *n = names_new();
  n_collected = 0;
  hop_event e = side("h", 9, 1, 0, 3);
  e.ts_ns = -10;
  assert_int_equal(names_apply(n, &e), 0);
  assert_false(names_waiting(n, -20)); /* before it: not yet */
  assert_true(names_waiting(n, INT64_MAX));
  assert_int_equal(names_release(n, INT64_MAX, false, collect, NULL), 0);
  assert_int_equal(n_collected, 1);
  names_free(n);
}

/* A flood of held sides and of table events for other ids (a hostile
 * process, a flight ring that begins after its tables): a table event
 * examines only the sides waiting for its entry, so the work is the
 * sides', not sides x events (review-3 B5: 100k x 8k took 30 s). */
static void table_events_examine_only_their_waiters(void **state) {
  (void)state;
  names *n = names_new();
  n_collected = 0;
  put(n, table(HOP_PROCESS, "h", 5, 0, "osd.5"));
  for (int i = 0; i < 1000; i++) { /* desc 7 never named yet */
    hop_event e = side("h", 5, 7, 0, 3);
    e.ts_ns = 1000 + i;
    assert_int_equal(names_apply(n, &e), 0);
  }
  assert_int_equal(names_examined(n), 1000);
  for (uint32_t id = 8; id < 1008; id++) {
    put(n, table(HOP_DESC, "h", 5, id, "other"));
    put(n, table(HOP_PEER, "h", 5, id, "tcp://x:1"));
    put(n, table(HOP_DESC, "h", 5, 0x10000 + id, "dropped")); /* no id of a side */
    assert_false(names_waiting(n, 2000));
    /* as a reader did after every table event */
    assert_int_equal(names_release(n, 2000, false, collect, NULL), 0);
  }
  assert_int_equal(n_collected, 0);
  assert_int_equal(names_examined(n), 1000); /* none of theirs: none examined */
  put(n, table(HOP_DESC, "h", 5, 7, "op7"));
  assert_int_equal(names_examined(n), 2000); /* each once more, and named */
  assert_true(names_waiting(n, 2000));
  assert_int_equal(names_release(n, 2000, false, collect, NULL), 0);
  assert_int_equal(n_collected, 1000);
  assert_string_equal(collected_name, "op7");
  assert_int_equal(names_unresolved(n), 0);
  names_free(n);
}

/* A side held for its peer is named by the desc in effect at its time,
 * not by the same id written again with other text while it waited (a
 * new process with the same vpid, or a hostile one): counted. Written
 * again as it was is no redefinition. */
static void a_held_side_keeps_the_names_of_its_time(void **state) {
  (void)state;
  names *n = names_new();
  n_collected = 0;
  put(n, table(HOP_PROCESS, "h", 100, 0, "proc"));
  put(n, table(HOP_DESC, "h", 100, 1, "old_op"));
  hop_event e = side("h", 100, 1, 5, 3);
  e.ts_ns = 2000;
  assert_int_equal(names_apply(n, &e), 0); /* held: peer 5 not named */
  put(n, table(HOP_DESC, "h", 100, 1, "new_op"));
  put(n, table(HOP_PEER, "h", 100, 5, "10.0.0.1:1"));
  assert_int_equal(names_release(n, 4000, false, collect, NULL), 0);
  assert_int_equal(n_collected, 1);
  assert_string_equal(collected_name, "old_op");
  assert_string_equal(collected_peer, "10.0.0.1:1");
  assert_int_equal(names_redefined(n), 1);
  e = side("h", 100, 1, 5, 3); /* after it: the new text */
  assert_int_equal(names_apply(n, &e), 1);
  assert_string_equal(e.name, "new_op");
  assert_int_equal(names_unresolved(n), 0);
  names_free(n);
}

/* Sides waiting for keys that never come leave no trace in the tables
 * once passed on: the entries among them are all found again. */
static void waits_given_up_leave_the_table_whole(void **state) {
  (void)state;
  names *n = names_new();
  char text[32];
  n_collected = 0;
  put(n, table(HOP_PROCESS, "h", 1, 0, "p1"));
  put(n, table(HOP_PROCESS, "h", 2, 0, "p2"));
  for (uint32_t i = 1; i <= 400; i++) {
    snprintf(text, sizeof(text), "op%u", i);
    put(n, table(HOP_DESC, "h", 1, i, text));
    hop_event e = side("h", 2, i, 0, 3); /* vpid 2's desc i: never named */
    e.ts_ns = 1000;
    assert_int_equal(names_apply(n, &e), 0);
  }
  assert_int_equal(names_release(n, 1001 + NAMES_HOLD_NS, false, collect, NULL), 0);
  assert_int_equal(n_collected, 400);
  assert_int_equal(names_unresolved(n), 400);
  for (uint32_t i = 1; i <= 400; i++) {
    hop_event e = side("h", 1, i, 0, 3);
    assert_int_equal(names_apply(n, &e), 1);
    snprintf(text, sizeof(text), "op%u", i);
    assert_string_equal(e.name, text);
  }
  hop_event e = side("h", 2, 3, 0, 3); /* and a wait given up may begin again */
  e.ts_ns = 5000;
  assert_int_equal(names_apply(n, &e), 0);
  put(n, table(HOP_DESC, "h", 2, 3, "late"));
  assert_int_equal(names_release(n, 5000, false, collect, NULL), 0);
  assert_string_equal(collected_name, "late");
  assert_int_equal(names_unresolved(n), 400);
  names_free(n);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ids_resolve_per_host_and_process),
      cmocka_unit_test(many_entries_are_kept),
      cmocka_unit_test(a_side_waits_for_its_process),
      cmocka_unit_test(a_long_host_keeps_its_names),
      cmocka_unit_test(far_apart_times_release),
      cmocka_unit_test(table_events_examine_only_their_waiters),
      cmocka_unit_test(a_held_side_keeps_the_names_of_its_time),
      cmocka_unit_test(waits_given_up_leave_the_table_whole),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
