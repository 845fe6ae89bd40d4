/* Parallel decoding's parts: events packed into blocks come back equal
 * (strings, kvs, NULLs, losses), a full block refuses, a damaged block
 * is refused instead of trusted; stream files split into balanced groups
 * of links, removed without touching the trace; a decoder that dies
 * fails the read with how it died. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "read/bt_parallel.h"
#include "read/event_block.h"
#include "read/stream_split.h"

#define CAP 4096

static hop_event sample_event(const hop_kv *kvs, size_t n_kvs) {
  return (hop_event){.kind = HOP_KVS, .ts_ns = 1234567890123, .trace_hi = 1, .trace_lo = 2,
                     .span_id = 3, .parent_id = 4, .vpid = 55, .vtid = 56,
                     .procname = "sim-osd", .hostname = "node-1", .name = "osd_write",
                     .service = "osd.3", .endpoint = "tcp://127.0.0.1:6803", .status = -5,
                     .message = NULL, .key = "", .kvs = kvs, .n_kvs = n_kvs,
                     .annotation = "sr", .msg_type = 7, .seq = 99, .size = 4096,
                     .peer = "tcp://127.0.0.1:7000"};
}

static void events_round_trip(void **state) {
  (void)state;
  static _Alignas(16) unsigned char mem[CAP];
  event_block *b = (event_block *)mem;
  event_block_init(b);
  hop_kv kvs[2] = {{"pg", false, 0, "1.2f"}, {"bytes", true, 4096, NULL}};
  hop_event in = sample_event(kvs, 2);
  assert_int_equal(event_block_put_event(b, CAP, &in), 0);
  hop_loss loss = {.hostname = "node-2", .events = 17, .packets = 3, .begin_ns = 100,
                   .end_ns = 200};
  assert_int_equal(event_block_put_discarded(b, CAP, &loss), 0);
  hop_event plain = sample_event(NULL, 0);
  plain.kind = HOP_SPAN_START;
  assert_int_equal(event_block_put_event(b, CAP, &plain), 0);
  assert_int_equal(b->n_records, 3);

  uint32_t at = 0;
  const hop_event *ev = NULL;
  const event_record *r = event_block_next(b, &at, &ev);
  assert_non_null(r);
  assert_int_equal(r->type, EVENT_RECORD_EVENT);
  assert_int_equal(r->ts_ns, in.ts_ns);
  assert_int_equal(ev->span_id, 3);
  assert_int_equal(ev->vpid, 55);
  assert_int_equal(ev->status, -5);
  assert_string_equal(ev->procname, "sim-osd");
  assert_string_equal(ev->hostname, "node-1");
  assert_string_equal(ev->endpoint, "tcp://127.0.0.1:6803");
  assert_string_equal(ev->peer, "tcp://127.0.0.1:7000");
  assert_string_equal(ev->key, "");
  assert_null(ev->message);
  assert_ptr_not_equal(ev->procname, in.procname); /* a copy in the block */
  assert_int_equal(ev->n_kvs, 2);
  assert_string_equal(ev->kvs[0].key, "pg");
  assert_string_equal(ev->kvs[0].str_value, "1.2f");
  assert_true(ev->kvs[1].is_int);
  assert_int_equal(ev->kvs[1].int_value, 4096);
  assert_null(ev->kvs[1].str_value);

  r = event_block_next(b, &at, &ev);
  assert_non_null(r);
  assert_int_equal(r->type, EVENT_RECORD_DISCARDED);
  assert_int_equal(r->count, 17);
  assert_int_equal(r->ts_ns, 100);
  assert_int_equal(r->end_ns, 200);
  hop_loss back = event_block_loss(r, ev);
  assert_string_equal(back.hostname, "node-2");
  assert_int_equal(back.events, 17);
  assert_int_equal(back.packets, 3);
  assert_int_equal(back.begin_ns, 100);
  assert_int_equal(back.end_ns, 200);

  r = event_block_next(b, &at, &ev);
  assert_non_null(r);
  assert_int_equal(ev->kind, HOP_SPAN_START);
  assert_null(ev->kvs);
  assert_null(event_block_next(b, &at, &ev));
  assert_int_equal(at, b->used);
}

static void full_block_refuses(void **state) {
  (void)state;
  static _Alignas(16) unsigned char mem[CAP];
  event_block *b = (event_block *)mem;
  event_block_init(b);
  hop_event ev = sample_event(NULL, 0);
  size_t n = 0;
  while (event_block_put_event(b, CAP, &ev) == 0)
    n++;
  assert_true(n > 0);
  assert_int_equal(b->n_records, n);
  assert_true(b->used <= CAP);
  assert_true(b->used + event_record_size(&ev) > CAP);
  char big[CAP];
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  ev.name = big;
  event_block_init(b);
  assert_int_equal(event_block_put_event(b, CAP, &ev), -1); /* never fits */
  assert_int_equal(b->n_records, 0);
}

static void damaged_block_is_refused(void **state) {
  (void)state;
  static _Alignas(16) unsigned char mem[CAP];
  event_block *b = (event_block *)mem;
  hop_event in = sample_event(NULL, 0);
  const hop_event *ev;
  uint32_t at;

  event_block_init(b); /* a string offset pointing outside its record */
  assert_int_equal(event_block_put_event(b, CAP, &in), 0);
  hop_event *stored = (hop_event *)(mem + 16 + sizeof(event_record));
  stored->name = (const char *)(uintptr_t)(CAP * 2);
  at = 0;
  assert_null(event_block_next(b, &at, &ev));

  event_block_init(b); /* a record size beyond the block */
  assert_int_equal(event_block_put_event(b, CAP, &in), 0);
  ((event_record *)(mem + 16))->size = CAP * 4;
  at = 0;
  assert_null(event_block_next(b, &at, &ev));

  event_block_init(b); /* an unknown record type */
  hop_loss one = {.hostname = "", .events = 1, .begin_ns = 2, .end_ns = 3};
  assert_int_equal(event_block_put_discarded(b, CAP, &one), 0);
  ((event_record *)(mem + 16))->type = 99;
  at = 0;
  assert_null(event_block_next(b, &at, &ev));
}

static void write_file(const char *path, size_t size) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  for (size_t i = 0; i < size; i++)
    fputc('x', f);
  fclose(f);
}

static int count_links(const char *root, const char *trace_sub, const char *name) {
  char p[4096];
  struct stat sb;
  snprintf(p, sizeof(p), "%s/%s/%s", root, trace_sub, name);
  return lstat(p, &sb) == 0 && S_ISLNK(sb.st_mode);
}

static void streams_split_into_balanced_link_groups(void **state) {
  (void)state;
  char base[] = "/tmp/test-split.XXXXXX";
  assert_non_null(mkdtemp(base));
  char trace[512], p[4096];
  snprintf(trace, sizeof(trace), "%s/trace", base);
  assert_int_equal(mkdir(trace, 0700), 0);
  snprintf(p, sizeof(p), "%s/index", trace);
  assert_int_equal(mkdir(p, 0700), 0);
  const char *names[] = {"metadata", "chan_0", "chan_1", "chan_2", "chan_3", "chan_empty"};
  const size_t sizes[] = {10, 9000, 5000, 3000, 100, 0};
  for (int i = 0; i < 6; i++) {
    snprintf(p, sizeof(p), "%s/%s", trace, names[i]);
    write_file(p, sizes[i]);
  }
  setenv("TMPDIR", base, 1);
  char *dirs[] = {trace};
  stream_split split;
  char err[256];
  assert_int_equal(stream_split_make(dirs, 1, 2, &split, err, sizeof(err)), 0);
  assert_int_equal(split.n_groups, 2);
  /* largest first to the lightest: {chan_0} and {chan_1, chan_2, chan_3} */
  int in0 = count_links(split.roots[0], "t0", "chan_0");
  assert_int_equal(in0 + count_links(split.roots[1], "t0", "chan_0"), 1);
  const char *other = split.roots[in0 ? 1 : 0];
  assert_true(count_links(other, "t0", "chan_1") && count_links(other, "t0", "chan_2") &&
              count_links(other, "t0", "chan_3"));
  for (size_t g = 0; g < 2; g++) {
    assert_true(count_links(split.roots[g], "t0", "metadata"));
    assert_true(count_links(split.roots[g], "t0", "index"));
    assert_false(count_links(split.roots[g], "t0", "chan_empty"));
  }
  char root0[4096];
  snprintf(root0, sizeof(root0), "%s", split.roots[0]);
  stream_split_remove(&split);
  struct stat sb;
  assert_int_not_equal(stat(root0, &sb), 0); /* gone */
  snprintf(p, sizeof(p), "%s/chan_0", trace);
  assert_int_equal(stat(p, &sb), 0); /* the trace untouched */
  assert_int_equal(sb.st_size, 9000);

  /* one stream file: nothing to split, nothing made */
  char lone[512];
  snprintf(lone, sizeof(lone), "%s/lone", base);
  assert_int_equal(mkdir(lone, 0700), 0);
  snprintf(p, sizeof(p), "%s/metadata", lone);
  write_file(p, 10);
  snprintf(p, sizeof(p), "%s/chan_0", lone);
  write_file(p, 10);
  char *lone_dirs[] = {lone};
  assert_int_equal(stream_split_make(lone_dirs, 1, 4, &split, err, sizeof(err)), 1);
  assert_int_equal(split.n_groups, 0);
  /* clean up the test's own files */
  char cmd[4200];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
  assert_int_equal(system(cmd), 0);
}

/* A decoder that dies before its end: by SIGKILL for "killed", exit
 * status 3 otherwise (a crash the reader cannot prevent). */
static int dying_read(const char *input, const bt_source_callbacks *cb, void *user,
                      bt_source_stats *stats, atomic_int *stop, char *err, size_t err_len) {
  (void)cb, (void)user, (void)stats, (void)stop, (void)err, (void)err_len;
  if (strcmp(input, "killed") == 0)
    raise(SIGKILL);
  _exit(3);
}

static void read_fails_with(const char *input, const char *how) {
  char err[512] = "";
  char *inputs[] = {(char *)input, (char *)input};
  bt_parallel *p = bt_parallel_start(inputs, 2, dying_read, err, sizeof(err));
  assert_non_null(p);
  bt_source_callbacks cb = {0};
  bt_source_stats stats;
  assert_int_equal(bt_parallel_read(p, &cb, NULL, &stats, NULL, err, sizeof(err)), -1);
  bt_parallel_stop(p);
  if (strstr(err, how) == NULL)
    fail_msg("'%s' does not say '%s'", err, how);
}

static void a_dead_decoder_says_how_it_died(void **state) {
  (void)state;
  read_fails_with("killed", " ended without finishing: killed by signal 9 (");
  read_fails_with("exits", " ended without finishing: exited with status 3");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(events_round_trip),
      cmocka_unit_test(full_block_refuses),
      cmocka_unit_test(damaged_block_is_refused),
      cmocka_unit_test(streams_split_into_balanced_link_groups),
      cmocka_unit_test(a_dead_decoder_says_how_it_died),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
