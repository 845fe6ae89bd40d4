/* Flight mode in process memory (flight_memory.h): the captures queued
 * for the replay thread, the table of traces captured lately, and the
 * replay thread itself. */
#include "recording/flight_memory.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "hoptrace/error.h"

int ht_fm_on_;

/* Traces captured lately, by their low id word: one slot each, a newer
 * one in a taken slot evicts the older (its later sides then stay in
 * memory: a snapshot may miss them). Fields are separate atomics: a torn
 * entry only ever makes a side go to LTTng when it need not. */
#define RECENT_SLOTS 1024u
static struct recent_slot {
  _Atomic uint64_t hi, lo, at;
} recent[RECENT_SLOTS];
static _Atomic uint64_t last_capture_at; /* 0: none yet */

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static ht_fm_capture queue[HT_FM_QUEUE];   /* [queue_lock] */
static size_t queued;                      /* [queue_lock] */
static bool thread_started, thread_failed; /* [queue_lock] */
static bool stopping;                      /* [queue_lock] */
static pthread_t replayer;
static _Atomic uint64_t n_captures, n_unreplayed, n_scans, n_sides, n_tags;

void ht_fm_enable(uint32_t slots) {
  ht_fr_set_slots(slots != 0 ? slots : HT_FM_DEFAULT_SLOTS);
  ht_fm_on_ = 1;
}

/* ht_fm_recent's slot for the trace: the one holding its ids, else NULL
 * (not captured lately: never, or another trace took its place). */
static const struct recent_slot *recent_slot(uint64_t hi, uint64_t lo) {
  const struct recent_slot *r = &recent[lo % RECENT_SLOTS];
  if (atomic_load_explicit(&r->lo, memory_order_relaxed) != lo ||
      atomic_load_explicit(&r->hi, memory_order_relaxed) != hi)
    return NULL;
  return r;
}

static bool recent_at(const struct recent_slot *r, uint64_t now) {
  return now - atomic_load_explicit(&r->at, memory_order_relaxed) < HT_FM_RECENT_NS;
}

bool ht_fm_recent(uint64_t hi, uint64_t lo, uint64_t now) {
  uint64_t last = atomic_load_explicit(&last_capture_at, memory_order_relaxed);
  if (last == 0 || now - last >= HT_FM_RECENT_NS)
    return false;
  const struct recent_slot *r = recent_slot(hi, lo);
  return r != NULL && recent_at(r, now);
}

/* The ids first: once any trace was captured, a clock read for every
 * key-value would be a cost of the messenger's path. */
bool ht_fm_recent_now(uint64_t hi, uint64_t lo) {
  if (atomic_load_explicit(&last_capture_at, memory_order_relaxed) == 0)
    return false;
  const struct recent_slot *r = recent_slot(hi, lo);
  return r != NULL && recent_at(r, ht_clock_now());
}

static void remember(uint64_t hi, uint64_t lo, uint64_t now) {
  struct recent_slot *r = &recent[lo % RECENT_SLOTS];
  atomic_store_explicit(&r->at, now, memory_order_relaxed);
  atomic_store_explicit(&r->hi, hi, memory_order_relaxed);
  atomic_store_explicit(&r->lo, lo, memory_order_relaxed);
  atomic_store_explicit(&last_capture_at, now != 0 ? now : 1, memory_order_relaxed);
}

/* The traces one scan looks for: an open-addressed set of the batch's. */
#define SET_SLOTS (2 * HT_FM_QUEUE)
typedef struct scan_set {
  uint64_t hi[SET_SLOTS], lo[SET_SLOTS];
  bool used[SET_SLOTS];
} scan_set;

static void set_add(scan_set *s, uint64_t hi, uint64_t lo) {
  unsigned i = (unsigned)(lo % SET_SLOTS);
  while (s->used[i] && !(s->hi[i] == hi && s->lo[i] == lo))
    i = (i + 1) % SET_SLOTS;
  s->used[i] = true;
  s->hi[i] = hi;
  s->lo[i] = lo;
}

static bool set_wants(uint64_t hi, uint64_t lo, void *arg) {
  const scan_set *s = arg;
  for (unsigned i = (unsigned)(lo % SET_SLOTS); s->used[i]; i = (i + 1) % SET_SLOTS)
    if (s->lo[i] == lo && s->hi[i] == hi)
      return true;
  return false;
}

static void replay_one(const ht_fr_record *r, void *arg) {
  (void)arg;
  if (r->type == HT_FM_SIDE && r->n == HT_FM_WORDS) {
    ht_recorder_replay_side(r);
    atomic_fetch_add_explicit(&n_sides, 1, memory_order_relaxed);
  } else if ((r->type == HT_FM_TAG_I || r->type == HT_FM_TAG_S) && r->n > HT_FM_TAG_TEXT) {
    ht_recorder_replay_tag(r);
    atomic_fetch_add_explicit(&n_tags, 1, memory_order_relaxed);
  }
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

/* Takes the queue, at most every HT_FM_SCAN_GAP_MS: one scan finds the
 * sides of every trace queued meanwhile; their captures come after. */
static void *replay_thread(void *unused) {
  (void)unused;
  static ht_fm_capture batch[HT_FM_QUEUE];
  static scan_set set;
  pthread_mutex_lock(&queue_lock);
  for (;;) {
    while (queued == 0 && !stopping)
      pthread_cond_wait(&queue_cond, &queue_lock);
    if (queued == 0)
      break;
    size_t n = queued;
    memcpy(batch, queue, n * sizeof(batch[0]));
    queued = 0;
    pthread_mutex_unlock(&queue_lock);
    memset(&set, 0, sizeof(set));
    bool any = false;
    for (size_t i = 0; i < n; i++)
      if (batch[i].replay) {
        set_add(&set, batch[i].trace_hi, batch[i].trace_lo);
        any = true;
      }
    if (any) {
      ht_recorder_replay_begin();
      ht_fr_take(set_wants, replay_one, &set);
      atomic_fetch_add_explicit(&n_scans, 1, memory_order_relaxed);
    }
    for (size_t i = 0; i < n; i++)
      ht_recorder_replay_capture(&batch[i]);
    pthread_mutex_lock(&queue_lock);
    if (!stopping) {
      pthread_mutex_unlock(&queue_lock);
      sleep_ms(HT_FM_SCAN_GAP_MS);
      pthread_mutex_lock(&queue_lock);
    }
  }
  pthread_mutex_unlock(&queue_lock);
  return NULL;
}

/* A fork's child has no replay thread: it starts its own. */
static void forget_thread(void) {
  pthread_mutex_init(&queue_lock, NULL);
  pthread_cond_init(&queue_cond, NULL);
  queued = 0;
  thread_started = thread_failed = false;
}

static void stop_thread(void);

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void register_atfork(void) { pthread_atfork(NULL, NULL, forget_thread); }

int ht_fm_capture_later(ht_fm_capture *c, uint64_t now) {
  pthread_once(&atfork_once, register_atfork);
  c->replay = !ht_fm_recent(c->trace_hi, c->trace_lo, now);
  remember(c->trace_hi, c->trace_lo, now);
  int rc = 0;
  pthread_mutex_lock(&queue_lock);
  if (!thread_started && !thread_failed) {
    static bool at_exit_set;
    if (!at_exit_set)
      at_exit_set = atexit(stop_thread) == 0;
    if (at_exit_set && pthread_create(&replayer, NULL, replay_thread, NULL) == 0)
      thread_started = true;
    else
      thread_failed = true;
  }
  if (!thread_started || stopping)
    rc = HT_ENOMEM;
  else if (queued == HT_FM_QUEUE)
    rc = HT_ENOSPC;
  else
    queue[queued++] = *c;
  if (rc == 0)
    pthread_cond_signal(&queue_cond);
  pthread_mutex_unlock(&queue_lock);
  atomic_fetch_add_explicit(rc == 0 ? &n_captures : &n_unreplayed, 1, memory_order_relaxed);
  return rc;
}

void ht_fm_stats_get(ht_fm_stats *out) {
  out->captures = atomic_load_explicit(&n_captures, memory_order_relaxed);
  out->unreplayed = atomic_load_explicit(&n_unreplayed, memory_order_relaxed);
  out->scans = atomic_load_explicit(&n_scans, memory_order_relaxed);
  out->sides = atomic_load_explicit(&n_sides, memory_order_relaxed);
  out->tags = atomic_load_explicit(&n_tags, memory_order_relaxed);
}

/* At exit the queued captures are written and the thread joined: an
 * atexit handler (registered with the thread) runs before the shared
 * libraries' destructors, while lttng-ust still writes events, so a
 * capture asked for just before a clean exit is kept. */
static void stop_thread(void) {
  pthread_mutex_lock(&queue_lock);
  bool join = thread_started;
  stopping = true;
  pthread_cond_signal(&queue_cond);
  pthread_mutex_unlock(&queue_lock);
  if (join)
    pthread_join(replayer, NULL);
}
