/* A lock for critical sections of a few stores (a list link), where an
 * uncontended pthread mutex costs ten times the section itself: one
 * exchange to take, one release store to give back. A waiter spins a
 * little, then yields (the holder may be preempted). Internal to
 * libhoptrace. Must never guard anything that blocks or calls out. */
#ifndef HT_COMMON_SPIN_H
#define HT_COMMON_SPIN_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#if defined(__x86_64__) || defined(__i386__)
#define HT_SPIN_PAUSE() __builtin_ia32_pause()
#else
#define HT_SPIN_PAUSE() ((void)0)
#endif

typedef struct ht_spin {
  atomic_bool held;
} ht_spin;

static inline void ht_spin_lock(ht_spin *s) {
  while (atomic_exchange_explicit(&s->held, true, memory_order_acquire)) {
    for (int i = 0; i < 64 && atomic_load_explicit(&s->held, memory_order_relaxed); i++)
      HT_SPIN_PAUSE();
    if (atomic_load_explicit(&s->held, memory_order_relaxed))
      sched_yield();
  }
}

static inline void ht_spin_unlock(ht_spin *s) {
  atomic_store_explicit(&s->held, false, memory_order_release);
}

#endif /* HT_COMMON_SPIN_H */
