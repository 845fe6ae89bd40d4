/* Address parsing leaves no byte of ht_tr_addr undefined: the listener copies
 * the path of every address, TCP ones included (valgrind found strcpy
 * reading an uninitialised path). The struct is filled with
 * garbage first, as a stack variable would be. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "hoptrace/error.h"
#include "transport/internal.h"

static void parse_over_garbage(const char *url, bool is_unix) {
  ht_tr_addr a;
  memset(&a, 0xa5, sizeof(a)); /* no NUL anywhere in path */
  assert_int_equal(ht_tr_addr_parse(url, &a), 0);
  assert_int_equal(a.is_unix, is_unix);
  assert_true(memchr(a.path, '\0', sizeof(a.path)) != NULL);
  if (!is_unix) {
    assert_int_equal(a.path[0], '\0');
    for (size_t i = 0; i < sizeof(a.path); i++)
      assert_int_equal(a.path[i], 0);
  }
}

static void test_tcp_address_has_empty_path(void **state) {
  (void)state;
  parse_over_garbage("tcp://127.0.0.1:6800", false);
  parse_over_garbage("tcp://[::1]:6800", false);
  parse_over_garbage("tcp://localhost:1", false);
}

static void test_unix_address_keeps_path(void **state) {
  (void)state;
  ht_tr_addr a;
  memset(&a, 0xa5, sizeof(a));
  assert_int_equal(ht_tr_addr_parse("unix:///tmp/x.sock", &a), 0);
  assert_true(a.is_unix);
  assert_string_equal(a.path, "/tmp/x.sock");
}

static void test_bad_addresses(void **state) {
  (void)state;
  ht_tr_addr a;
  assert_int_equal(ht_tr_addr_parse("tcp://nohost", &a), HT_EADDR);
  assert_int_equal(ht_tr_addr_parse("udp://1.2.3.4:5", &a), HT_EADDR);
  assert_int_equal(ht_tr_addr_parse(NULL, &a), HT_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tcp_address_has_empty_path),
      cmocka_unit_test(test_unix_address_keeps_path),
      cmocka_unit_test(test_bad_addresses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
