/* forkhold.h: a lock held by fork's prepare handler, on behalf of the
 * forking thread, until the parent or child handler.  A program's own
 * handlers registered before a dlopen() of the library run in between (glibc
 * runs prepare handlers in reverse order), in the forking thread, and may
 * call cpucycles(), a first call included.  Waiting for the lock there
 * would wait forever, so the forking thread uses it as held: nobody else
 * can be inside, and its work ends before its handler returns, so a child
 * still never inherits work half done. */
#ifndef CPUCYCLES_FORKHOLD_H
#define CPUCYCLES_FORKHOLD_H

#ifndef _WIN32
#include <pthread.h>

struct cpucycles_fork_hold {
  pthread_t holder; /* meaningful while held */
  int held;
};

/* Right after the prepare handler took the lock. */
static inline void cpucycles_fork_hold_take(struct cpucycles_fork_hold *h)
{
  pthread_t self = pthread_self();
  __atomic_store(&h->holder, &self, __ATOMIC_RELAXED);
  __atomic_store_n(&h->held, 1, __ATOMIC_RELEASE);
}

/* Right before the parent or child handler releases the lock.  (In the
 * child, pthread_self() of the forking thread is what it was.) */
static inline void cpucycles_fork_hold_drop(struct cpucycles_fork_hold *h)
{
  __atomic_store_n(&h->held, 0, __ATOMIC_RELAXED);
}

/* Whether the calling thread holds the lock for fork: it must neither
 * take nor release it then. */
static inline int cpucycles_fork_hold_mine(struct cpucycles_fork_hold *h)
{
  pthread_t holder;
  if (!__atomic_load_n(&h->held, __ATOMIC_ACQUIRE)) return 0;
  __atomic_load(&h->holder, &holder, __ATOMIC_RELAXED);
  return pthread_equal(holder, pthread_self());
}
#endif

#endif
