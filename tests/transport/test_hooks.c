/* The interceptor seam for the traced messenger (src/transport/hooks.h):
 * a hook table stamps a trace context before encoding, sees dispatch with
 * the decoded context, names the reply's context, carries a per-request
 * slot to the reply callback and a dispatch slot to request_done, and
 * sees each frame exactly once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdatomic.h>

#include "common/counters.h"
#include "hoptrace/error.h"
#include "transport/hooks.h"
#include "tt_util.h"

typedef struct hook_log {
  atomic_int encodes, dispatches, after, done, replies, sends, recvs;
  atomic_int destroyed;
  atomic_int slot_ok, ctx_ok, reply_ctx_ok, send_slot_ok, other_recvs;
  ht_trace_context reply_ctx[256]; /* by sequence: fewer are in flight */
} hook_log;

static void before_encode(void *arg, ht_envelope *env, const ht_hook_peer *to,
                          void **slot) {
  hook_log *h = arg;
  assert_non_null(to->url);
  assert_true(to->serial != 0);
  atomic_fetch_add(&h->encodes, 1);
  assert_int_equal(env->type, HT_MSG_REQUEST); /* replies: the transport */
  env->has_trace = true;
  env->trace = (ht_trace_context){0, 0x1111, env->sequence + 100, 0,
                                  HT_FLAG_SAMPLED};
  *slot = (void *)(uintptr_t)(env->sequence * 2 + 1);
}

static void before_dispatch(void *arg, const ht_envelope *env,
                            const ht_hook_origin *from, size_t frame_len,
                            void **slot, const ht_trace_context **reply_trace) {
  hook_log *h = arg;
  (void)from;
  assert_true(frame_len > env->payload_len);
  atomic_fetch_add(&h->recvs, 1);
  atomic_fetch_add(&h->dispatches, 1);
  if (env->has_trace && env->trace.trace_id_lo == 0x1111 &&
      env->trace.span_id == env->sequence + 100)
    atomic_fetch_add(&h->ctx_ok, 1);
  *slot = (void *)(uintptr_t)(env->sequence + 5000);
  /* the reply carries what this names (the server span, say) */
  ht_trace_context *c = &h->reply_ctx[env->sequence % 256];
  *c = (ht_trace_context){0, 0x2222, env->sequence + 5000, 0, 0};
  assert_null(*reply_trace);
  *reply_trace = c;
}

static void after_dispatch(void *arg, const ht_envelope *env, void *slot) {
  (void)env;
  assert_null(slot); /* requests only in this test */
  atomic_fetch_add(&((hook_log *)arg)->after, 1);
}

static void request_done(void *arg, void *slot, int status,
                         size_t frame_len) {
  hook_log *h = arg;
  assert_int_equal(status, 0);
  atomic_fetch_add(&h->done, 1);
  if (frame_len > 0) /* the reply went out, as request_done's last act */
    atomic_fetch_add(&h->sends, 1);
  if (frame_len > 0 && slot != NULL)
    atomic_fetch_add(&h->send_slot_ok, 1);
}

static void on_reply(void *arg, int status, const ht_envelope *reply,
                     size_t reply_len, void *slot) {
  hook_log *h = arg;
  atomic_fetch_add(&h->replies, 1);
  if (reply != NULL && reply_len > reply->payload_len)
    atomic_fetch_add(&h->recvs, 1);
  if (status == 0 && (uintptr_t)slot == reply->sequence * 2 + 1)
    atomic_fetch_add(&h->slot_ok, 1);
  if (status == 0 && reply->has_trace && reply->trace.trace_id_lo == 0x2222 &&
      reply->trace.span_id == reply->sequence + 5000)
    atomic_fetch_add(&h->reply_ctx_ok, 1);
}

static void on_message(void *arg, ht_hook_dir dir, const ht_envelope *env,
                       size_t frame_len, const char *peer, void *slot) {
  hook_log *h = arg;
  (void)peer;
  /* a request's send sees its request slot */
  if (dir == HT_HOOK_SEND && env->type == HT_MSG_REQUEST &&
      (uintptr_t)slot == env->sequence * 2 + 1)
    atomic_fetch_add(&h->send_slot_ok, 1);
  assert_true(frame_len > env->payload_len);
  /* every frame received here reached before_dispatch or on_reply */
  atomic_fetch_add(dir == HT_HOOK_SEND ? &h->sends : &h->other_recvs, 1);
}

static void destroy(void *arg) {
  atomic_fetch_add(&((hook_log *)arg)->destroyed, 1);
}

static const ht_transport_hooks table = {
    .before_encode = before_encode, .before_dispatch = before_dispatch,
    .after_dispatch = after_dispatch, .request_done = request_done,
    .on_reply = on_reply, .on_message = on_message, .destroy = destroy};

/* --- slot storage kept by the transport (dispatch_slot_size) */

static atomic_int storage_ok, storage_bad;

static void fill_check(void *slot, uint8_t byte, bool fill) {
  if (slot == NULL || (uintptr_t)slot % _Alignof(max_align_t) != 0) {
    atomic_fetch_add(&storage_bad, 1);
    return;
  }
  uint8_t *b = slot;
  for (size_t i = 0; i < HT_HOOK_SLOT_MAX; i++) {
    if (fill)
      b[i] = byte;
    else if (b[i] != byte) {
      atomic_fetch_add(&storage_bad, 1);
      return;
    }
  }
  if (!fill)
    atomic_fetch_add(&storage_ok, 1);
}

static void storage_dispatch(void *arg, const ht_envelope *env,
                             const ht_hook_origin *from, size_t frame_len,
                             void **slot, const ht_trace_context **reply_trace) {
  (void)arg, (void)from, (void)frame_len, (void)reply_trace;
  fill_check(*slot, (uint8_t)env->sequence, true);
}

static void storage_after(void *arg, const ht_envelope *env, void *slot) {
  (void)arg;
  if (env->type == HT_MSG_ONEWAY) /* its storage lives until here */
    fill_check(slot, (uint8_t)env->sequence, false);
  else if (slot != NULL)
    atomic_fetch_add(&storage_bad, 1);
}

static void storage_done(void *arg, void *slot, int status,
                         size_t frame_len) {
  (void)arg, (void)status, (void)frame_len;
  /* the byte pattern: each request's own storage, still intact */
  uint8_t *b = slot;
  fill_check(slot, b != NULL ? b[0] : 0, false);
}

static const ht_transport_hooks storage_table = {
    .before_dispatch = storage_dispatch,
    .after_dispatch = storage_after,
    .request_done = storage_done,
    .dispatch_slot_size = HT_HOOK_SLOT_MAX};

/* A handler sees its request's dispatch slot through the accessor. */
static void slot_echo(void *arg, ht_request *req, const ht_envelope *msg) {
  atomic_int *ok = arg;
  if ((uintptr_t)ht_transport_request_slot(req) == msg->sequence + 5000)
    atomic_fetch_add(ok, 1);
  tt_echo_handler(NULL, req, msg);
}

static void on_user_reply(void *arg, int status, const ht_envelope *reply) {
  (void)reply;
  if (status == 0)
    tt_counter_add(arg, 1);
}

/* n requests of "echo" through p, all answered. */
static void echo_round(ht_peer *p, int n) {
  tt_counter got;
  tt_counter_init(&got);
  for (int i = 0; i < n; i++) {
    ht_payload pl = {"x", 1, NULL, NULL};
    assert_int_equal(ht_peer_request(p, "echo", &pl, NULL, on_user_reply, &got), 0);
  }
  assert_int_equal(tt_counter_wait(&got, n, 10000), n);
  tt_counter_destroy(&got);
}

static void test_hooks_see_every_hop(void **state) {
  (void)state;
  static hook_log hs, hc;
  ht_messenger *srv, *cli;
  assert_int_equal(ht_transport_messenger_new(&srv, NULL, &table, &hs), 0);
  assert_int_equal(ht_transport_messenger_new(&cli, NULL, &table, &hc), 0);
  static atomic_int slot_seen;
  assert_int_equal(ht_messenger_handle(srv, "echo", slot_echo, &slot_seen), 0);
  char url[128];
  assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", url, sizeof(url)), 0);
  ht_peer *p;
  assert_int_equal(ht_messenger_connect(cli, url, &p), 0);
  enum { N = 100 };
  echo_round(p, N);
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
  assert_int_equal(atomic_load(&hc.encodes), N);
  assert_int_equal(atomic_load(&hc.sends), N);
  assert_int_equal(atomic_load(&hc.recvs), N);
  assert_int_equal(atomic_load(&hc.replies), N);
  assert_int_equal(atomic_load(&hc.slot_ok), N);
  assert_int_equal(atomic_load(&hc.reply_ctx_ok), N);
  assert_int_equal(atomic_load(&hs.dispatches), N);
  assert_int_equal(atomic_load(&hs.ctx_ok), N);
  assert_int_equal(atomic_load(&hs.after), N);
  assert_int_equal(atomic_load(&hs.done), N);
  assert_int_equal(atomic_load(&hs.encodes), 0);
  assert_int_equal(atomic_load(&hs.sends), N);
  assert_int_equal(atomic_load(&hs.recvs), N);
  assert_int_equal(atomic_load(&hc.other_recvs), 0);
  assert_int_equal(atomic_load(&hs.other_recvs), 0);
  assert_int_equal(atomic_load(&hc.send_slot_ok), N);
  assert_int_equal(atomic_load(&hs.send_slot_ok), N);
  assert_int_equal(atomic_load(&hs.destroyed), 1);
  assert_int_equal(atomic_load(&slot_seen), N);
  assert_int_equal(atomic_load(&hc.destroyed), 1);
}

static void on_oneway(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)req, (void)msg;
  tt_counter_add(arg, 1);
}

static void test_transport_keeps_slot_storage(void **state) {
  (void)state;
  ht_messenger *srv, *cli;
  assert_int_equal(ht_transport_messenger_new(&srv, NULL, &storage_table, NULL), 0);
  assert_int_equal(ht_transport_messenger_new(&cli, NULL, NULL, NULL), 0);
  tt_counter got, ways;
  tt_counter_init(&got);
  tt_counter_init(&ways);
  assert_int_equal(ht_messenger_handle(srv, "echo", tt_echo_handler, NULL), 0);
  assert_int_equal(ht_messenger_handle(srv, "note", on_oneway, &ways), 0);
  char url[128];
  assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", url, sizeof(url)), 0);
  ht_peer *p;
  assert_int_equal(ht_messenger_connect(cli, url, &p), 0);
  enum { N = 50 };
  for (int i = 0; i < N; i++) {
    ht_payload pl = {"x", 1, NULL, NULL};
    assert_int_equal(ht_peer_request(p, "echo", &pl, NULL, on_user_reply, &got), 0);
    assert_int_equal(ht_peer_send(p, "note", &pl), 0);
  }
  assert_int_equal(tt_counter_wait(&got, N, 10000), N);
  assert_int_equal(tt_counter_wait(&ways, N, 10000), N);
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
  assert_int_equal(atomic_load(&storage_bad), 0);
  assert_int_equal(atomic_load(&storage_ok), 2 * N);
  /* more than the transport keeps: refused */
  ht_transport_hooks big = storage_table;
  big.dispatch_slot_size = HT_HOOK_SLOT_MAX + 1;
  assert_int_equal(ht_transport_messenger_new(&srv, NULL, &big, NULL), HT_EINVAL);
  tt_counter_destroy(&got);
  tt_counter_destroy(&ways);
}

/* --- before_reply behind its gate (before_reply_gate): called for the
 * replies encoded while the word is nonzero, and only those */

static atomic_uint reply_gate;
static atomic_int gated_calls;

static void gated_before_reply(void *arg, void *slot, int32_t status) {
  (void)arg, (void)slot, (void)status;
  atomic_fetch_add(&gated_calls, 1);
}

static void test_before_reply_waits_for_its_gate(void **state) {
  (void)state;
  ht_transport_hooks gated = storage_table;
  gated.before_reply = gated_before_reply;
  gated.before_reply_gate = &reply_gate;
  ht_messenger *srv, *cli;
  assert_int_equal(ht_transport_messenger_new(&srv, NULL, &gated, NULL), 0);
  assert_int_equal(ht_transport_messenger_new(&cli, NULL, NULL, NULL), 0);
  assert_int_equal(ht_messenger_handle(srv, "echo", tt_echo_handler, NULL), 0);
  char url[128];
  assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", url, sizeof(url)), 0);
  ht_peer *p;
  assert_int_equal(ht_messenger_connect(cli, url, &p), 0);
  enum { N = 20 };
  echo_round(p, N); /* closed: no call */
  assert_int_equal(atomic_load(&gated_calls), 0);
  atomic_store(&reply_gate, 1u);
  echo_round(p, N); /* open: one a reply */
  assert_int_equal(atomic_load(&gated_calls), N);
  atomic_store(&reply_gate, 0u);
  echo_round(p, N);
  assert_int_equal(atomic_load(&gated_calls), N);
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
}

/* --- the peer before_encode is told: each peer of the process its own
 * serial, the same for every message to it, also two peers of one URL */

static uint64_t seen_serial[2];
static int serial_phase; /* which peer the test thread sends to */
static atomic_int serial_bad;

static void serial_encode(void *arg, ht_envelope *env, const ht_hook_peer *to,
                          void **slot) {
  (void)arg, (void)env, (void)slot;
  int i = serial_phase; /* before_encode: on the sending thread */
  if (to->serial == 0 || (seen_serial[i] != 0 && seen_serial[i] != to->serial))
    atomic_fetch_add(&serial_bad, 1);
  seen_serial[i] = to->serial;
}

static void test_each_peer_has_its_serial(void **state) {
  (void)state;
  static const ht_transport_hooks serial_table = {.before_encode = serial_encode};
  ht_messenger *srv, *cli;
  assert_int_equal(ht_transport_messenger_new(&srv, NULL, NULL, NULL), 0);
  assert_int_equal(ht_transport_messenger_new(&cli, NULL, &serial_table, NULL), 0);
  assert_int_equal(ht_messenger_handle(srv, "echo", tt_echo_handler, NULL), 0);
  char url[128];
  assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", url, sizeof(url)), 0);
  ht_peer *a, *b;
  assert_int_equal(ht_messenger_connect(cli, url, &a), 0);
  assert_int_equal(ht_messenger_connect(cli, url, &b), 0);
  echo_round(a, 3);
  serial_phase = 1;
  echo_round(b, 3);
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
  assert_int_equal(atomic_load(&serial_bad), 0);
  assert_true(seen_serial[0] != 0 && seen_serial[1] != 0);
  assert_true(seen_serial[0] != seen_serial[1]);
}

/* --- hooks that keep no slot (an unsampled message in the traced
 * messenger): no call made only to count; the transport counts */

static atomic_int quiet_calls[4]; /* on_message SEND, RECV, on_reply, request_done */
static atomic_int quiet_failed;

static void quiet_encode(void *arg, ht_envelope *env, const ht_hook_peer *to,
                         void **slot) {
  (void)arg, (void)env, (void)to, (void)slot; /* leaves *slot NULL */
}

static void quiet_dispatch(void *arg, const ht_envelope *env,
                           const ht_hook_origin *from, size_t frame_len,
                           void **slot, const ht_trace_context **reply_trace) {
  (void)arg, (void)env, (void)from, (void)frame_len, (void)reply_trace;
  assert_non_null(*slot); /* the transport's storage, given up */
  *slot = NULL;
}

static void quiet_message(void *arg, ht_hook_dir dir, const ht_envelope *env,
                          size_t frame_len, const char *peer, void *slot) {
  (void)arg, (void)env, (void)frame_len, (void)peer, (void)slot;
  atomic_fetch_add(&quiet_calls[dir == HT_HOOK_SEND ? 0 : 1], 1);
}

static void quiet_reply(void *arg, int status, const ht_envelope *reply,
                        size_t reply_len, void *slot) {
  (void)arg, (void)reply, (void)reply_len;
  assert_null(slot);
  atomic_fetch_add(&quiet_calls[2], 1);
  if (status != 0)
    atomic_fetch_add(&quiet_failed, 1);
}

static void quiet_done(void *arg, void *slot, int status, size_t frame_len) {
  (void)arg, (void)slot, (void)status, (void)frame_len;
  atomic_fetch_add(&quiet_calls[3], 1);
}

static const ht_transport_hooks quiet_table = {
    .before_encode = quiet_encode,
    .before_dispatch = quiet_dispatch,
    .request_done = quiet_done,
    .on_reply = quiet_reply,
    .on_message = quiet_message,
    .dispatch_slot_size = 64,
    .count_frames = true};

static void on_any_reply(void *arg, int status, const ht_envelope *reply) {
  (void)status, (void)reply;
  tt_counter_add(arg, 1);
}

static void test_slotless_messages_skip_counting_hooks(void **state) {
  (void)state;
  uint64_t before[4], after[4]; /* msgs sent, received, bytes sent, received */
  ht_counters_read(HT_CTR_MSGS_SENT, 4, before);
  ht_messenger *srv, *cli;
  assert_int_equal(ht_transport_messenger_new(&srv, NULL, &quiet_table, NULL), 0);
  assert_int_equal(ht_transport_messenger_new(&cli, NULL, &quiet_table, NULL), 0);
  assert_int_equal(ht_messenger_handle(srv, "echo", tt_echo_handler, NULL), 0);
  char url[128];
  assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", url, sizeof(url)), 0);
  ht_peer *p;
  assert_int_equal(ht_messenger_connect(cli, url, &p), 0);
  enum { N = 40, PAYLOAD = 3 };
  tt_counter got;
  tt_counter_init(&got);
  for (int i = 0; i < N; i++) {
    ht_payload pl = {"abc", PAYLOAD, NULL, NULL};
    assert_int_equal(ht_peer_request(p, "echo", &pl, NULL, on_any_reply, &got), 0);
  }
  /* one that fails (no handler): its error reply still reaches on_reply */
  ht_payload pl = {"abc", PAYLOAD, NULL, NULL};
  assert_int_equal(ht_peer_request(p, "nobody", &pl, NULL, on_any_reply, &got), 0);
  assert_int_equal(tt_counter_wait(&got, N + 1, 10000), N + 1);
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
  assert_int_equal(atomic_load(&quiet_calls[0]), 0); /* no on_message(SEND) */
  assert_int_equal(atomic_load(&quiet_calls[1]), 0);
  assert_int_equal(atomic_load(&quiet_calls[2]), 1); /* the failed one only */
  assert_int_equal(atomic_load(&quiet_failed), 1);
  assert_int_equal(atomic_load(&quiet_calls[3]), 0); /* no request_done */
  /* every frame counted once, each way: N + 1 requests and their replies */
  ht_counters_read(HT_CTR_MSGS_SENT, 4, after);
  assert_int_equal(after[0] - before[0], 2 * (N + 1));
  assert_int_equal(after[1] - before[1], 2 * (N + 1));
  assert_int_equal(after[2] - before[2], after[3] - before[3]);
  assert_true(after[2] - before[2] > (uint64_t)(2 * (N + 1) * PAYLOAD));
  tt_counter_destroy(&got);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hooks_see_every_hop),
      cmocka_unit_test(test_transport_keeps_slot_storage),
      cmocka_unit_test(test_before_reply_waits_for_its_gate),
      cmocka_unit_test(test_each_peer_has_its_serial),
      cmocka_unit_test(test_slotless_messages_skip_counting_hooks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
