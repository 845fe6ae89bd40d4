/* The vectored key-value event's field layout: separators, types, ints,
 * escaping of the separator, truncation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "recording/recorder.h"

typedef struct joined {
  char keys[HT_KVS_TEXT_MAX + 1], strs[HT_KVS_TEXT_MAX + 1];
  uint8_t types[HT_KVS_MAX];
  int64_t ints[HT_KVS_MAX];
  ht_tp_kvs v;
} joined;

static void join(joined *j, const ht_kv *kvs, size_t n) {
  memset(j, 0x55, sizeof(*j));
  ht_recorder_join_kvs(kvs, n, j->keys, j->strs, j->types, j->ints, &j->v);
}

static void mixed_kvs_are_joined_in_order(void **state) {
  (void)state;
  ht_kv kvs[] = {{"pool", HT_KV_STR, "rbd", 0},
                 {"objects", HT_KV_INT, NULL, -3},
                 {"replica", HT_KV_STR, "osd.2", 0}};
  joined j;
  join(&j, kvs, 3);
  assert_int_equal(j.v.count, 3);
  assert_string_equal(j.keys, "pool\x1fobjects\x1freplica");
  assert_int_equal(j.v.keys_len, strlen(j.keys));
  assert_memory_equal(j.strs, "rbd\x1f\x1fosd.2", 11);
  assert_int_equal(j.v.strs_len, 10);
  assert_int_equal(j.types[0], 0);
  assert_int_equal(j.types[1], 1);
  assert_int_equal(j.types[2], 0);
  assert_int_equal(j.ints[0], 0);
  assert_int_equal(j.ints[1], -3);
  assert_ptr_equal(j.v.keys, j.keys);
  assert_ptr_equal(j.v.ints, j.ints);
}

static void separator_inside_a_part_is_replaced(void **state) {
  (void)state;
  ht_kv kvs[] = {{"a\x1f" "b", HT_KV_STR, "x\x1fy", 0}};
  joined j;
  join(&j, kvs, 1);
  assert_string_equal(j.keys, "a?b");
  assert_string_equal(j.strs, "x?y");
}

static void long_text_is_truncated_and_terminated(void **state) {
  (void)state;
  static char big[3000];
  memset(big, 'k', sizeof(big) - 1);
  ht_kv kvs[HT_KVS_MAX];
  for (size_t i = 0; i < HT_KVS_MAX; i++)
    kvs[i] = (ht_kv){big, HT_KV_STR, big, 0};
  joined j;
  join(&j, kvs, HT_KVS_MAX + 5); /* more than the maximum: clamped */
  assert_int_equal(j.v.count, HT_KVS_MAX);
  assert_int_equal(j.v.keys_len, HT_KVS_TEXT_MAX);
  assert_int_equal(strlen(j.keys), HT_KVS_TEXT_MAX);
  assert_int_equal(j.v.strs_len, HT_KVS_TEXT_MAX);
}

static void empty_and_null_parts(void **state) {
  (void)state;
  ht_kv kvs[] = {{NULL, HT_KV_STR, NULL, 0}, {"", HT_KV_INT, NULL, 7}};
  joined j;
  join(&j, kvs, 2);
  assert_int_equal(j.v.keys_len, 1);
  assert_string_equal(j.keys, "\x1f");
  assert_string_equal(j.strs, "\x1f");
  assert_int_equal(j.ints[1], 7);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mixed_kvs_are_joined_in_order),
      cmocka_unit_test(separator_inside_a_part_is_replaced),
      cmocka_unit_test(long_text_is_truncated_and_terminated),
      cmocka_unit_test(empty_and_null_parts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
