/* Threads and loops: replies from worker threads, requests from many
 * application threads at once on shared peers (the cross-thread queue),
 * and a messenger running on a loop the caller owns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <uv.h>

#include "tt_util.h"

/* --- replies from a worker thread */

typedef struct work_queue {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  ht_envelope *msgs[64];
  ht_request *reqs[64];
  int n;
  bool stop;
} work_queue;

static void enqueue_handler(void *arg, ht_request *req, const ht_envelope *msg) {
  work_queue *q = arg;
  ht_envelope *keep;
  assert_int_equal(ht_message_copy(msg, &keep), 0);
  pthread_mutex_lock(&q->lock);
  assert_true(q->n < 64);
  q->msgs[q->n] = keep;
  q->reqs[q->n++] = req;
  pthread_cond_signal(&q->cond);
  pthread_mutex_unlock(&q->lock);
}

static void free_reply(void *arg, int status) {
  (void)status;
  free(arg);
}

static void *worker(void *arg) {
  work_queue *q = arg;
  for (;;) {
    pthread_mutex_lock(&q->lock);
    while (q->n == 0 && !q->stop)
      pthread_cond_wait(&q->cond, &q->lock);
    if (q->n == 0) {
      pthread_mutex_unlock(&q->lock);
      return NULL;
    }
    ht_envelope *msg = q->msgs[--q->n];
    ht_request *req = q->reqs[q->n];
    pthread_mutex_unlock(&q->lock);
    /* Zero-copy reply: the buffer is freed by done. */
    char *out = malloc(msg->payload_len + 1);
    memcpy(out, msg->payload, msg->payload_len);
    out[msg->payload_len] = '!';
    ht_payload p = {out, msg->payload_len + 1, free_reply, out};
    if (ht_request_reply(req, 0, &p) != 0)
      free(out);
    ht_message_free(msg);
  }
}

static void test_worker_thread_replies(void **state) {
  (void)state;
  work_queue q = {.n = 0};
  pthread_mutex_init(&q.lock, NULL);
  pthread_cond_init(&q.cond, NULL);
  pthread_t th[2];
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, worker, &q);
  ht_messenger *srv = tt_messenger("srv", NULL, NULL);
  ht_messenger *cli = tt_messenger("cli", NULL, NULL);
  assert_int_equal(ht_messenger_handle(srv, "disk", enqueue_handler, &q), 0);
  char bound[128];
  assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", bound, sizeof(bound)), 0);
  ht_peer *p;
  assert_int_equal(ht_messenger_connect(cli, bound, &p), 0);
  enum { N = 40 };
  static reply_box boxes[N];
  char texts[N][16];
  for (int i = 0; i < N; i++) {
    box_init(&boxes[i]);
    snprintf(texts[i], sizeof(texts[i]), "w%d", i);
    ht_payload pl = {texts[i], strlen(texts[i]), NULL, NULL};
    assert_int_equal(ht_peer_request(p, "disk", &pl, NULL, box_reply, &boxes[i]), 0);
  }
  for (int i = 0; i < N; i++) {
    assert_int_equal(tt_counter_wait(&boxes[i].done, 1, 10000), 1);
    assert_int_equal(boxes[i].status, 0);
    assert_int_equal(boxes[i].len, strlen(texts[i]) + 1);
    assert_memory_equal(boxes[i].payload, texts[i], strlen(texts[i]));
    assert_int_equal(boxes[i].payload[strlen(texts[i])], '!');
  }
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
  pthread_mutex_lock(&q.lock);
  q.stop = true;
  pthread_cond_broadcast(&q.cond);
  pthread_mutex_unlock(&q.lock);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  pthread_mutex_destroy(&q.lock);
  pthread_cond_destroy(&q.cond);
}

/* --- many sender threads on shared peers */

enum { THREADS = 8, PER_THREAD = 1000, PEERS = 4 };

typedef struct sender {
  ht_peer **peers;
  int id;
  atomic_int *matched;
  atomic_int *done;
  atomic_int *seen;
} sender;

typedef struct sent_ctx {
  sender *s;
  uint32_t value;
} sent_ctx;

static void sent_reply(void *arg, int status, const ht_envelope *reply) {
  sent_ctx *c = arg;
  uint32_t v = 0;
  if (status == 0 && reply->payload_len == 4)
    memcpy(&v, reply->payload, 4);
  if (status == 0 && v == c->value)
    atomic_fetch_add(c->s->matched, 1);
  atomic_fetch_add(&c->s->seen[c->value], 1);
  atomic_fetch_add(c->s->done, 1);
  free(c);
}

static void *send_many(void *arg) {
  sender *s = arg;
  for (int i = 0; i < PER_THREAD; i++) {
    sent_ctx *c = malloc(sizeof(*c));
    c->s = s;
    c->value = (uint32_t)(s->id * PER_THREAD + i);
    ht_payload p = {&c->value, 4, NULL, NULL};
    ht_peer *peer = s->peers[(s->id + i) % PEERS];
    if (i % 10 == 0) /* one-ways interleave with the requests */
      assert_int_equal(ht_peer_send(peer, "note", &p), 0);
    assert_int_equal(ht_peer_request(peer, "echo", &p, NULL, sent_reply, c), 0);
  }
  return NULL;
}

static void count_note(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)req;
  (void)msg;
  atomic_fetch_add((atomic_int *)arg, 1);
}

static void test_many_sender_threads(void **state) {
  (void)state;
  ht_messenger *srv = tt_messenger("srv", NULL, NULL);
  ht_messenger *cli = tt_messenger("cli", NULL, NULL);
  static atomic_int notes, matched, done, seen[THREADS * PER_THREAD];
  assert_int_equal(ht_messenger_handle(srv, "echo", tt_echo_handler, NULL), 0);
  assert_int_equal(ht_messenger_handle(srv, "note", count_note, &notes), 0);
  char url[128];
  assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", url, sizeof(url)), 0);
  ht_peer *peers[PEERS];
  for (int i = 0; i < PEERS; i++)
    assert_int_equal(ht_messenger_connect(cli, url, &peers[i]), 0);
  sender senders[THREADS];
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; t++) {
    senders[t] = (sender){peers, t, &matched, &done, seen};
    pthread_create(&th[t], NULL, send_many, &senders[t]);
  }
  for (int t = 0; t < THREADS; t++)
    pthread_join(th[t], NULL);
  uint64_t until = tt_now_ms() + 20000;
  while (atomic_load(&done) < THREADS * PER_THREAD && tt_now_ms() < until)
    tt_sleep_ms(2);
  assert_int_equal(atomic_load(&done), THREADS * PER_THREAD);
  assert_int_equal(atomic_load(&matched), THREADS * PER_THREAD);
  for (int v = 0; v < THREADS * PER_THREAD; v++)
    assert_int_equal(atomic_load(&seen[v]), 1);
  until = tt_now_ms() + 5000;
  while (atomic_load(&notes) < THREADS * PER_THREAD / 10 && tt_now_ms() < until)
    tt_sleep_ms(2);
  assert_int_equal(atomic_load(&notes), THREADS * PER_THREAD / 10);
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
}

/* --- a messenger on the caller's loop */

typedef struct ext_state {
  ht_messenger *cli;
  ht_peer *peer;
  int replies;
  int status;
  uv_timer_t timer;
} ext_state;

static void ext_reply(void *arg, int status, const ht_envelope *reply) {
  ext_state *s = arg;
  s->status = status;
  if (status == 0 && reply->payload_len == 3 &&
      memcmp(reply->payload, "ext", 3) == 0)
    s->replies++;
  if (s->replies < 10 && status == 0) {
    ht_payload pl = {"ext", 3, NULL, NULL};
    ht_peer_request(s->peer, "echo", &pl, NULL, ext_reply, s);
  } else {
    uv_stop(s->timer.loop);
  }
}

static void ext_kick(uv_timer_t *t) {
  ext_state *s = t->data;
  ht_payload pl = {"ext", 3, NULL, NULL};
  assert_int_equal(ht_peer_request(s->peer, "echo", &pl, NULL, ext_reply, s), 0);
}

static void ext_guard(uv_timer_t *t) { uv_stop(t->loop); }

static void test_caller_loop(void **state) {
  (void)state;
  ht_messenger *srv = tt_messenger("srv", NULL, NULL);
  assert_int_equal(ht_messenger_handle(srv, "echo", tt_echo_handler, NULL), 0);
  char url[128], bound[128];
  tt_unix_url(url, sizeof(url), "ext");
  assert_int_equal(ht_messenger_listen(srv, url, bound, sizeof(bound)), 0);

  uv_loop_t loop;
  uv_loop_init(&loop);
  ht_messenger_options o;
  ht_messenger_options_init(&o);
  o.loop = &loop;
  o.flavour = HT_MESSENGER_PLAIN;
  ext_state s = {0};
  assert_int_equal(ht_messenger_new(&o, &s.cli), 0);
  assert_int_equal(ht_messenger_connect(s.cli, bound, &s.peer), 0);
  uv_timer_init(&loop, &s.timer);
  s.timer.data = &s;
  uv_timer_start(&s.timer, ext_kick, 1, 0);
  uv_timer_t guard;
  uv_timer_init(&loop, &guard);
  uv_timer_start(&guard, ext_guard, 10000, 0);
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(s.replies, 10);
  uv_close((uv_handle_t *)&s.timer, NULL);
  uv_close((uv_handle_t *)&guard, NULL);
  assert_int_equal(ht_messenger_close(s.cli, 100), 0);
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&loop), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_worker_thread_replies),
      cmocka_unit_test(test_many_sender_threads),
      cmocka_unit_test(test_caller_loop),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
