/* The recorder's intern tables (shim/recording/intern.c): one entry per
 * distinct description or peer, stable ids and addresses across growth,
 * lookups from several threads agree, the cap is a NULL (the recorder then
 * writes names inline), each entry is claimed once per epoch and again
 * after ht_intern_refresh, and a string rewritten at the same address is
 * looked up by its new text (the per-thread memo checks content). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "recording/intern.h"

static void same_strings_same_entry(void **state) {
  (void)state;
  const ht_intern_entry *a = ht_intern_desc(1, "op", "svc", "");
  const ht_intern_entry *b = ht_intern_desc(1, "op", "svc", "");
  assert_non_null(a);
  assert_ptr_equal(a, b);
  assert_true(a->id >= 1);
  /* any part differing, or moved between parts, is another entry */
  assert_ptr_not_equal(a, ht_intern_desc(2, "op", "svc", ""));
  assert_ptr_not_equal(a, ht_intern_desc(1, "o", "psvc", ""));
  assert_ptr_not_equal(a, ht_intern_desc(1, "op", "sv", "c"));
  assert_string_equal(a->name, "op");
  assert_string_equal(a->service, "svc");
  const ht_intern_entry *p = ht_intern_peer("tcp://127.0.0.1:1");
  assert_ptr_equal(p, ht_intern_peer("tcp://127.0.0.1:1"));
  assert_string_equal(p->name, "tcp://127.0.0.1:1");
}

/* The caller's buffers rewritten between lookups (same addresses, other
 * text: shorter, longer, same length, emptied) give the new text's entry,
 * never the memo's old one; the old text again gives the old entry. */
static void reused_buffers_are_read_again(void **state) {
  (void)state;
  char name[300] = "reuse-op", service[32] = "svc", endpoint[32] = "tcp://h:1";
  const ht_intern_entry *a = ht_intern_desc(1, name, service, endpoint);
  assert_ptr_equal(a, ht_intern_desc(1, name, service, endpoint));
  const char *names[] = {"reuse-oq", "reuse-o", "reuse-opx", ""};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    strcpy(name, names[i]);
    const ht_intern_entry *b = ht_intern_desc(1, name, service, endpoint);
    assert_ptr_not_equal(a, b);
    assert_string_equal(b->name, names[i]);
    assert_ptr_equal(b, ht_intern_desc(1, name, service, endpoint));
  }
  strcpy(name, "reuse-op");
  assert_ptr_equal(a, ht_intern_desc(1, name, service, endpoint));
  strcpy(service, "svd");
  assert_string_equal(ht_intern_desc(1, name, service, endpoint)->service, "svd");
  strcpy(service, "svc");
  endpoint[0] = '\0';
  assert_string_equal(ht_intern_desc(1, name, service, endpoint)->endpoint, "");
  strcpy(endpoint, "tcp://h:1");
  assert_ptr_equal(a, ht_intern_desc(1, name, service, endpoint));
  /* a long name: its last byte decides */
  memset(name, 'x', 280);
  name[280] = '\0';
  const ht_intern_entry *l = ht_intern_desc(1, name, service, endpoint);
  assert_ptr_equal(l, ht_intern_desc(1, name, service, endpoint));
  name[279] = 'y';
  assert_ptr_not_equal(l, ht_intern_desc(1, name, service, endpoint));
  name[279] = 'x';
  assert_ptr_equal(l, ht_intern_desc(1, name, service, endpoint));
}

/* A NULL string reads as "", every time (not kept by the memo). */
static void null_strings_read_as_empty(void **state) {
  (void)state;
  const ht_intern_entry *e = ht_intern_desc(2, "null-op", "", "");
  assert_ptr_equal(e, ht_intern_desc(2, "null-op", NULL, NULL));
  assert_ptr_equal(e, ht_intern_desc(2, "null-op", NULL, NULL));
  const ht_intern_entry *n = ht_intern_desc(2, NULL, "svc", NULL);
  assert_string_equal(n->name, "");
  assert_ptr_equal(n, ht_intern_desc(2, "", "svc", ""));
}

static void *intern_many(void *arg) {
  const ht_intern_entry **out = arg;
  char name[32];
  for (int i = 0; i < 3000; i++) {
    snprintf(name, sizeof(name), "grow-%d", i);
    out[i] = ht_intern_desc(0, name, "s", "e");
  }
  return NULL;
}

/* Two threads interning the same 3,000 names while the table grows get the
 * same entries, with distinct ids. */
static void growth_keeps_entries_across_threads(void **state) {
  (void)state;
  static const ht_intern_entry *x[3000], *y[3000];
  pthread_t t;
  pthread_create(&t, NULL, intern_many, x);
  intern_many(y);
  pthread_join(t, NULL);
  for (int i = 0; i < 3000; i++) {
    assert_non_null(x[i]);
    assert_ptr_equal(x[i], y[i]);
    if (i > 0)
      assert_int_not_equal(x[i]->id, x[i - 1]->id);
  }
}

static void claimed_once_per_epoch(void **state) {
  (void)state;
  const ht_intern_entry *e = ht_intern_peer("claim-me");
  uint32_t epoch = ht_intern_new_epoch();
  uint64_t t = 5000000000u;
  assert_true(ht_intern_claim(e, epoch, t));
  assert_false(ht_intern_claim(e, epoch, t));
  assert_int_equal(ht_intern_epoch(), epoch);
  uint32_t next = ht_intern_new_epoch();
  assert_true(ht_intern_claim(e, next, t + 1));
  assert_false(ht_intern_claim(e, next, t + 2));
  /* in use a refresh later: written again (a late live viewer) */
  assert_false(ht_intern_claim(e, next, t + 1 + ht_intern_refresh - 1));
  assert_true(ht_intern_claim(e, next, t + 1 + ht_intern_refresh));
  assert_false(ht_intern_claim(e, next, t + 2 + ht_intern_refresh));
}

/* Past HT_INTERN_MAX peers: NULL, never an unbounded table. */
static void the_cap_is_null(void **state) {
  (void)state;
  char peer[32];
  const ht_intern_entry *last = NULL;
  int got = 0;
  for (int i = 0; i < HT_INTERN_MAX + 10; i++) {
    snprintf(peer, sizeof(peer), "p%d", i);
    last = ht_intern_peer(peer);
    got += last != NULL;
  }
  assert_null(last);
  assert_int_equal(got, HT_INTERN_MAX - 2); /* two peers interned above */
  assert_non_null(ht_intern_peer("claim-me")); /* old ones still found */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_strings_same_entry),
      cmocka_unit_test(reused_buffers_are_read_again),
      cmocka_unit_test(null_strings_read_as_empty),
      cmocka_unit_test(growth_keeps_entries_across_threads),
      cmocka_unit_test(claimed_once_per_epoch),
      cmocka_unit_test(the_cap_is_null),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
