/* The assembler's memory: chunks from huge-page slabs (the later ones
 * faulted in by the pool's filler thread) are reused after put and stay
 * distinct while in use; big requests are served on their
 * own; the name table shares equal names and declines past its bounds
 * (the caller then copies: nothing is lost). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "assemble/chunk_pool.h"
#include "assemble/name_table.h"

#define N_CHUNKS 12000 /* six slabs: spares from the filler thread too */

static void chunks_are_distinct_writable_and_reused(void **state) {
  (void)state;
  chunk_pool *pool = chunk_pool_new();
  assert_non_null(pool);
  static trace_chunk *c[N_CHUNKS];
  for (int i = 0; i < N_CHUNKS; i++) {
    c[i] = chunk_get(pool, 100);
    assert_non_null(c[i]);
    assert_int_equal(c[i]->cap, CHUNK_POOL_BYTES);
    assert_int_equal(c[i]->used, 0);
    assert_null(c[i]->next);
    assert_int_equal((uintptr_t)c[i]->data % 16, 0);
    memset(c[i]->data, i & 0xff, CHUNK_POOL_BYTES);
  }
  for (int i = 0; i < N_CHUNKS; i++) /* no chunk overlapped another */
    for (size_t b = 0; b < CHUNK_POOL_BYTES; b += 97)
      assert_int_equal(c[i]->data[b], i & 0xff);
  trace_chunk *first = c[0];
  chunk_put(pool, c[0]);
  assert_ptr_equal(chunk_get(pool, CHUNK_POOL_BYTES), first);
  for (int i = 1; i < N_CHUNKS; i++)
    chunk_put(pool, c[i]);
  chunk_put(pool, first);
  chunk_pool_free(pool);
}

static void big_requests_get_their_own_chunk(void **state) {
  (void)state;
  chunk_pool *pool = chunk_pool_new();
  trace_chunk *big = chunk_get(pool, 3 * CHUNK_POOL_BYTES + 5);
  assert_non_null(big);
  assert_int_equal(big->cap, 3 * CHUNK_POOL_BYTES + 5);
  memset(big->data, 1, big->cap);
  chunk_put(pool, big); /* freed at once, not kept */
  chunk_pool_free(pool);
}

static void equal_names_share_one_copy(void **state) {
  (void)state;
  name_table *t = name_table_new();
  char buf[32];
  strcpy(buf, "osd.3");
  const char *a = name_table_get(t, buf);
  assert_non_null(a);
  assert_ptr_not_equal(a, buf);
  strcpy(buf, "osd.4");
  const char *b = name_table_get(t, buf);
  assert_string_equal(a, "osd.3");
  assert_string_equal(b, "osd.4");
  assert_ptr_equal(name_table_get(t, "osd.3"), a);
  assert_ptr_equal(name_table_get(t, ""), name_table_get(t, ""));
  char long_name[NAME_TABLE_MAX_LEN + 2];
  memset(long_name, 'x', sizeof(long_name) - 1);
  long_name[sizeof(long_name) - 1] = '\0';
  assert_null(name_table_get(t, long_name));
  long_name[NAME_TABLE_MAX_LEN] = '\0';
  assert_non_null(name_table_get(t, long_name));
  name_table_free(t);
}

static void table_declines_past_its_name_bound(void **state) {
  (void)state;
  name_table *t = name_table_new();
  char buf[32];
  const char *first = NULL;
  for (unsigned i = 0; i < NAME_TABLE_MAX_NAMES; i++) {
    snprintf(buf, sizeof(buf), "127.0.0.1:%u", i);
    const char *p = name_table_get(t, buf);
    assert_non_null(p);
    if (i == 0)
      first = p;
  }
  assert_null(name_table_get(t, "one more"));
  assert_ptr_equal(name_table_get(t, "127.0.0.1:0"), first); /* still served */
  snprintf(buf, sizeof(buf), "127.0.0.1:%u", NAME_TABLE_MAX_NAMES - 1);
  assert_string_equal(name_table_get(t, buf), buf);
  name_table_free(t);
}

static void table_declines_past_its_byte_bound(void **state) {
  (void)state;
  name_table *t = name_table_new();
  char name[NAME_TABLE_MAX_LEN + 1];
  size_t stored = 0;
  unsigned i = 0;
  for (;; i++) {
    snprintf(name, sizeof(name), "%0*u", (int)NAME_TABLE_MAX_LEN, i);
    if (name_table_get(t, name) == NULL)
      break;
    stored += NAME_TABLE_MAX_LEN + 1;
  }
  assert_true(stored <= NAME_TABLE_MAX_BYTES);
  assert_true(stored + NAME_TABLE_MAX_LEN + 1 > NAME_TABLE_MAX_BYTES);
  name_table_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(chunks_are_distinct_writable_and_reused),
      cmocka_unit_test(big_requests_get_their_own_chunk),
      cmocka_unit_test(equal_names_share_one_copy),
      cmocka_unit_test(table_declines_past_its_name_bound),
      cmocka_unit_test(table_declines_past_its_byte_bound),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
