/* The hooks' lifecycle (src/transport/hooks.h conn_init/fini,
 * handler_init/fini): every non-NULL state reaches its fini exactly once,
 * before destroy, on every path: a connection that never connects, one
 * refused at once, one closed by its peer, a handler unregistered, the
 * messenger closed with handlers and connections still there. States are
 * heap blocks, so under ASan a missed fini leaks and a second one is a
 * double free. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdatomic.h>

#include "hoptrace/error.h"
#include "transport/hooks.h"
#include "tt_util.h"

#define MAGIC 0x11FEu

typedef struct state {
  unsigned magic;
  char op[32]; /* a handler's operation; "" for a connection or default */
} state;

typedef struct life {
  atomic_int conn_init, conn_null, conn_fini;
  atomic_int handler_init, handler_null, handler_fini;
  atomic_int destroyed, pending_at_destroy, bad;
  atomic_int dispatched;
  bool null_every_other; /* conn_init returns NULL every other time */
} life;

static state *new_state(const char *op) {
  state *s = calloc(1, sizeof(*s));
  if (s != NULL) {
    s->magic = MAGIC;
    snprintf(s->op, sizeof(s->op), "%s", op != NULL ? op : "");
  }
  return s;
}

static void end_state(life *l, void *p) {
  state *s = p;
  if (s == NULL || s->magic != MAGIC)
    atomic_fetch_add(&l->bad, 1);
  else
    s->magic = 0;
  free(s);
}

static void *conn_init(void *arg) {
  life *l = arg;
  if (atomic_fetch_add(&l->conn_init, 1) % 2 == 1 && l->null_every_other) {
    atomic_fetch_add(&l->conn_null, 1);
    return NULL;
  }
  return new_state(NULL);
}

static void conn_fini(void *arg, void *s) {
  life *l = arg;
  atomic_fetch_add(&l->conn_fini, 1);
  end_state(l, s);
}

static void *handler_init(void *arg, const char *op) {
  life *l = arg;
  atomic_fetch_add(&l->handler_init, 1);
  if (op != NULL && strcmp(op, "nil") == 0) { /* keeps nothing */
    atomic_fetch_add(&l->handler_null, 1);
    return NULL;
  }
  return new_state(op);
}

static void handler_fini(void *arg, void *s) {
  life *l = arg;
  atomic_fetch_add(&l->handler_fini, 1);
  end_state(l, s);
}

/* The origin carries the states init returned. */
static void before_dispatch(void *arg, const ht_envelope *env,
                            const ht_hook_origin *from, size_t frame_len,
                            void **slot, const ht_trace_context **reply_trace) {
  life *l = arg;
  (void)frame_len, (void)slot, (void)reply_trace;
  const state *c = from->conn, *h = from->handler;
  if (!l->null_every_other && (c == NULL || c->magic != MAGIC))
    atomic_fetch_add(&l->bad, 1);
  const char *op = env->operation != NULL ? env->operation : "";
  if (strcmp(op, "echo") == 0 &&
      (h == NULL || h->magic != MAGIC || strcmp(h->op, "echo") != 0))
    atomic_fetch_add(&l->bad, 1);
  if (strcmp(op, "echo") != 0 && h != NULL) /* nil, or no handler */
    atomic_fetch_add(&l->bad, 1);
  atomic_fetch_add(&l->dispatched, 1);
}

static void destroy(void *arg) {
  life *l = arg;
  int conns = atomic_load(&l->conn_init) - atomic_load(&l->conn_null);
  int handlers = atomic_load(&l->handler_init) - atomic_load(&l->handler_null);
  atomic_store(&l->pending_at_destroy,
               conns - atomic_load(&l->conn_fini) + handlers -
                   atomic_load(&l->handler_fini));
  atomic_fetch_add(&l->destroyed, 1);
}

static const ht_transport_hooks table = {.before_dispatch = before_dispatch,
                                         .conn_init = conn_init,
                                         .conn_fini = conn_fini,
                                         .handler_init = handler_init,
                                         .handler_fini = handler_fini,
                                         .destroy = destroy};

static void quiet(void *arg, ht_log_level level, const char *msg) {
  (void)arg, (void)level, (void)msg; /* refusals are expected here */
}

static ht_messenger *life_messenger(life *l, uint32_t max_connections) {
  ht_messenger_options o;
  ht_messenger_options_init(&o);
  o.log = quiet;
  o.reconnect_min_ms = 10;
  o.reconnect_max_ms = 20;
  if (max_connections > 0)
    o.max_connections = max_connections;
  ht_messenger *m = NULL;
  assert_int_equal(ht_transport_messenger_new(&m, &o, &table, l), 0);
  return m;
}

static void assert_paired(life *l) {
  assert_int_equal(atomic_load(&l->destroyed), 1);
  assert_int_equal(atomic_load(&l->pending_at_destroy), 0);
  assert_int_equal(atomic_load(&l->bad), 0);
}

static void test_connection_that_never_connects(void **unused) {
  (void)unused;
  life l = {0};
  ht_messenger *m = life_messenger(&l, 0);
  char url[128];
  tt_unix_url(url, sizeof(url), "nobody-listens");
  ht_peer *p;
  assert_int_equal(ht_messenger_connect(m, url, &p), 0);
  uint64_t until = tt_now_ms() + 5000;
  while (atomic_load(&l.conn_fini) < 3 && tt_now_ms() < until)
    tt_sleep_ms(5); /* attempts fail and back off, each a connection */
  assert_true(atomic_load(&l.conn_fini) >= 3);
  assert_int_equal(ht_messenger_close(m, 0), 0);
  assert_int_equal(atomic_load(&l.conn_init), atomic_load(&l.conn_fini));
  assert_paired(&l);
}

static void test_refused_and_closed_connections(void **unused) {
  (void)unused;
  for (int null_every_other = 0; null_every_other < 2; null_every_other++) {
    life l = {.null_every_other = null_every_other};
    ht_messenger *srv = life_messenger(&l, 1); /* the second is refused */
    assert_int_equal(ht_messenger_handle(srv, "echo", tt_echo_handler, NULL), 0);
    assert_int_equal(ht_messenger_handle(srv, "nil", tt_echo_handler, NULL), 0);
    char url[128];
    assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", url, sizeof(url)), 0);
    ht_messenger *a = tt_messenger("a", NULL, NULL);
    ht_peer *pa;
    assert_int_equal(ht_messenger_connect(a, url, &pa), 0);
    const char *ops[] = {"echo", "nil", "nobody"};
    for (int i = 0; i < 3; i++) {
      reply_box box;
      box_init(&box);
      assert_int_equal(ht_peer_request(pa, ops[i], NULL, NULL, box_reply, &box), 0);
      assert_int_equal(tt_counter_wait(&box.done, 1, 10000), 1);
      assert_int_equal(box.status, i < 2 ? 0 : HT_EPEERERROR);
      tt_counter_destroy(&box.done);
    }
    ht_messenger *b = tt_messenger("b", NULL, NULL);
    ht_peer *pb;
    assert_int_equal(ht_messenger_connect(b, url, &pb), 0);
    uint64_t until = tt_now_ms() + 5000; /* refused at once, then retried */
    while (atomic_load(&l.conn_init) < 4 && tt_now_ms() < until)
      tt_sleep_ms(5);
    assert_true(atomic_load(&l.conn_init) >= 4);
    assert_int_equal(ht_messenger_close(b, 0), 0);
    assert_int_equal(ht_messenger_close(a, 0), 0); /* srv's conn: peer gone */
    assert_int_equal(ht_messenger_close(srv, 0), 0);
    assert_int_equal(atomic_load(&l.dispatched), 3);
    assert_int_equal(atomic_load(&l.handler_init), 2);
    assert_int_equal(atomic_load(&l.handler_fini), 1); /* nil kept nothing */
    assert_paired(&l);
  }
}

static void noop_handler(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  ht_request_drop(req);
}

static void test_handlers_unregistered_and_left(void **unused) {
  (void)unused;
  life l = {0};
  ht_messenger *m = life_messenger(&l, 0);
  assert_int_equal(ht_messenger_handle(m, "a", noop_handler, NULL), 0);
  assert_int_equal(ht_messenger_handle(m, "b", noop_handler, NULL), 0);
  assert_int_equal(ht_messenger_handle(m, NULL, noop_handler, NULL), 0);
  assert_int_equal(ht_messenger_handle(m, "a", noop_handler, NULL), HT_EEXIST);
  assert_int_equal(ht_messenger_handle(m, NULL, noop_handler, NULL), HT_EEXIST);
  assert_int_equal(atomic_load(&l.handler_init), 3); /* refusals: none */
  assert_int_equal(ht_messenger_handle(m, "a", NULL, NULL), 0);
  assert_int_equal(ht_messenger_handle(m, NULL, NULL, NULL), 0);
  assert_int_equal(atomic_load(&l.handler_fini), 2);
  assert_int_equal(ht_messenger_handle(m, "a", NULL, NULL), HT_ENOENT);
  assert_int_equal(ht_messenger_handle(m, NULL, noop_handler, NULL), 0);
  assert_int_equal(ht_messenger_handle(m, "c", noop_handler, NULL), 0);
  assert_int_equal(ht_messenger_close(m, 0), 0); /* b, c, default left */
  assert_int_equal(atomic_load(&l.handler_init), 5);
  assert_int_equal(atomic_load(&l.handler_fini), 5);
  assert_paired(&l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_connection_that_never_connects),
      cmocka_unit_test(test_refused_and_closed_connections),
      cmocka_unit_test(test_handlers_unregistered_and_left),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
