/* config.h: the --to URL checked before anything starts (an
 * unbalanced bracket or port 99999 was accepted, and then every batch
 * failed as a connection error). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ship/config.h"

static int load(const char *to, char *err, size_t cap) {
  ship_config c;
  memset(&c, 0, sizeof(c));
  err[0] = '\0';
  int rc = ship_config_load(&c, to, "otlp", NULL, err, cap);
  if (rc == 0)
    ship_config_free(&c);
  return rc;
}

static void refused(const char *to, const char *why) {
  char err[512];
  int rc = load(to, err, sizeof(err));
  if (rc == 0)
    fail_msg("'%s' accepted", to);
  if (strstr(err, why) == NULL)
    fail_msg("'%s': '%s' does not say '%s'", to, err, why);
}

static void accepted(const char *to) {
  char err[512];
  if (load(to, err, sizeof(err)) != 0)
    fail_msg("'%s' refused: %s", to, err);
}

static void bad_urls_are_refused(void **state) {
  (void)state;
  unsetenv("OTEL_EXPORTER_OTLP_HEADERS");
  unsetenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS");
  refused("http://[::1", "'[' without ']'");
  refused("http://[::1", "'http://[::1'"); /* the URL named */
  refused("http://127.0.0.1:99999", "port outside 1..65535");
  refused("http://127.0.0.1:0/v1/traces", "port outside 1..65535");
  refused("http://127.0.0.1:123456789012345678901234", "port outside 1..65535");
  refused("http://127.0.0.1:/x", "empty port");
  refused("http://127.0.0.1:8x", "not a number");
  refused("http://::1]:4318", "no host");
  refused("http://h]:4318", "outside a bracketed IPv6");
  refused("http://[]:4318", "no host");
  refused("http://[::1]x", "after the host");
  refused("http://[zz]:80", "not an IPv6 address");
  refused("http://:4318/v1/traces", "no host");
  refused("http://user@/x", "no host");
  refused("https:///v1/traces", "no host");
  refused("http://local host:4318", "space or control byte");
  refused("http://localhost\x1b[2J:4318", "space or control byte");
  refused("ftp://127.0.0.1/x", "not http:// or https://");
  refused("127.0.0.1:4318", "not http:// or https://");
  accepted("http://127.0.0.1:4318");
  accepted("http://127.0.0.1:65535/v1/traces");
  accepted("https://collector.example.com/v1/traces");
  accepted("http://[::1]:4318/");
  accepted("http://[::1]");
  accepted("http://[fe80::1%25eth0]:4318");
  accepted("http://user:pw@collector:1/x");
}

static void environment_urls_are_checked_too(void **state) {
  (void)state;
  char err[512];
  unsetenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:70000", 1);
  assert_int_equal(load("env", err, sizeof(err)), -1);
  assert_non_null(strstr(err, "port outside 1..65535"));
  setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://[::1/v1/traces", 1);
  assert_int_equal(load("env", err, sizeof(err)), -1);
  assert_non_null(strstr(err, "'[' without ']'"));
  setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://[::1]:4318/v1/traces", 1);
  assert_int_equal(load("env", err, sizeof(err)), 0);
  unsetenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_urls_are_refused),
      cmocka_unit_test(environment_urls_are_checked_too),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
