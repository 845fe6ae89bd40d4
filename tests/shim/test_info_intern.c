/* ht_span_info_intern (shim/recording/intern.c): the copy carries its
 * description entry, found by address; any other info is read by its
 * text (a reused buffer gives its new text's entry); equal infos share a
 * copy across threads; NULL strings read as ""; a full region or names
 * table is HT_ENAMESFULL, never a silent cap. A process of its own: it
 * fills both. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "hoptrace/error.h"
#include "recording/intern.h"

static void the_copy_carries_its_entry(void **state) {
  (void)state;
  char name[32] = "buf-op", service[32] = "svc";
  ht_span_info mine = {name, HT_SPAN_CLIENT, service, "tcp://h:1"};
  const ht_span_info *in = NULL;
  assert_int_equal(ht_span_info_intern(&mine, &in), 0);
  assert_ptr_not_equal(in, &mine);
  assert_ptr_not_equal(in->name, name); /* the library's copy */
  const ht_intern_entry *e = ht_intern_info_desc(in);
  assert_ptr_equal(e, ht_intern_desc(HT_SPAN_CLIENT, "buf-op", "svc", "tcp://h:1"));
  assert_ptr_equal(e, ht_intern_info_desc(&mine));
  /* the caller's buffer reused with new text: its info gives the new
   * name, the interned copy still the old one */
  strcpy(name, "buf-oq");
  const ht_intern_entry *f = ht_intern_info_desc(&mine);
  assert_ptr_not_equal(e, f);
  assert_string_equal(f->name, "buf-oq");
  assert_ptr_equal(e, ht_intern_info_desc(in));
  assert_string_equal(in->name, "buf-op");
  /* an equal info: the same copy */
  const ht_span_info *again = NULL;
  ht_span_info same = {"buf-op", HT_SPAN_CLIENT, "svc", "tcp://h:1"};
  assert_int_equal(ht_span_info_intern(&same, &again), 0);
  assert_ptr_equal(again, in);
  assert_int_equal(ht_span_info_intern(NULL, &again), HT_EINVAL);
  assert_int_equal(ht_span_info_intern(&same, NULL), HT_EINVAL);
}

static void null_strings_read_as_empty(void **state) {
  (void)state;
  ht_span_info nulls = {NULL, HT_SPAN_SERVER, NULL, NULL};
  const ht_span_info *in = NULL;
  assert_int_equal(ht_span_info_intern(&nulls, &in), 0);
  assert_string_equal(in->name, "");
  assert_string_equal(in->service, "");
  assert_string_equal(in->endpoint, "");
  assert_int_equal(in->kind, HT_SPAN_SERVER);
  assert_ptr_equal(ht_intern_info_desc(in), ht_intern_desc(HT_SPAN_SERVER, "", "", ""));
  ht_span_info empties = {"", HT_SPAN_SERVER, "", ""};
  const ht_span_info *other = NULL;
  assert_int_equal(ht_span_info_intern(&empties, &other), 0);
  assert_ptr_equal(other, in);
}

#define THREADS 4
static const ht_span_info *got[THREADS];
static const ht_intern_entry *seen[THREADS];

static void *intern_and_start(void *arg) {
  size_t i = (size_t)arg;
  ht_span_info info = {"threaded-op", HT_SPAN_CLIENT, "svc", ""};
  if (ht_span_info_intern(&info, &got[i]) != 0)
    return NULL;
  for (int n = 0; n < 1000; n++)
    seen[i] = ht_intern_info_desc(got[i]);
  return NULL;
}

/* Interned on several threads at once, used while others intern. */
static void interned_across_threads(void **state) {
  (void)state;
  pthread_t t[THREADS];
  for (size_t i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, intern_and_start, (void *)i);
  for (size_t i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  for (size_t i = 0; i < THREADS; i++) {
    assert_non_null(got[i]);
    assert_ptr_equal(got[i], got[0]);
    assert_ptr_equal(seen[i], ht_intern_desc(HT_SPAN_CLIENT, "threaded-op", "svc", ""));
  }
}

/* 4,096 interned infos, then HT_ENAMESFULL; then the names table full
 * (HT_INTERN_MAX descriptions): HT_ENAMESFULL too. Earlier copies work. */
static void full_is_an_error(void **state) {
  (void)state;
  ht_span_info first = {"buf-op", HT_SPAN_CLIENT, "svc", "tcp://h:1"};
  const ht_span_info *kept = NULL, *out = NULL;
  assert_int_equal(ht_span_info_intern(&first, &kept), 0);
  char name[32];
  ht_span_info info = {name, HT_SPAN_INTERNAL, "full", ""};
  int rc = 0, made = 0;
  while (rc == 0 && made < 5000) {
    snprintf(name, sizeof(name), "region-%d", made);
    rc = ht_span_info_intern(&info, &out);
    made += rc == 0;
  }
  assert_int_equal(rc, HT_ENAMESFULL);
  assert_int_equal(made, 4096 - 3); /* 3 distinct copies made above */
  assert_string_equal(ht_strerror(rc), "span names table full");
  assert_string_equal(ht_err_name(rc), "HT_ENAMESFULL");
  for (int i = 0; i < HT_INTERN_MAX && ht_intern_desc(0, name, "fill", "") != NULL; i++)
    snprintf(name, sizeof(name), "fill-%d", i);
  snprintf(name, sizeof(name), "never-seen");
  assert_int_equal(ht_span_info_intern(&info, &out), HT_ENAMESFULL);
  assert_int_equal(ht_span_info_intern(&first, &out), 0); /* interned before */
  assert_ptr_equal(out, kept);
  assert_string_equal(ht_intern_info_desc(kept)->name, "buf-op");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_copy_carries_its_entry),
      cmocka_unit_test(null_strings_read_as_empty),
      cmocka_unit_test(interned_across_threads),
      cmocka_unit_test(full_is_an_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
