/* perf-registry.c: which perf events are open, in which thread and which
 * process (doc/perf-counters.md, "Threads" and "Fork"; doc/security.md,
 * "Unloading" and "Static TLS").  A pthread key made at load closes a
 * thread's events at its exit; the process-wide list closes every
 * thread's in a fork child.  The lock is held around each open, close and
 * list change, and across fork(); a signal handler of a thread that holds
 * it does not wait (the thread-local `mine`).  Epochs: a child made without
 * the fork handlers (_Fork(), clone()) sees the epoch page zero-filled
 * (MADV_WIPEONFORK, 4.14), and its first thread at the lock adopts the
 * process: a fresh lock, the inherited events dropped, the next epoch. */
#include "perf-registry.h" /* first: config.h, _GNU_SOURCE */

#ifdef CPUCYCLES_PERF_AVAILABLE

#include "forkhold.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18 /* Linux 4.14 */
#endif

static struct {
  pthread_mutex_t lock;
  struct cpucycles_perf_event *all; /* every thread's open events */
  long held;                        /* their descriptors */
  pthread_key_t key;
  int key_state;   /* 0 not created, 1 created, -1 failed */
  int ever_linked; /* set under the lock, never cleared */
  /* fork's prepare handler holds the lock for the forking thread until
   * the parent or child handler (forkhold.h) */
  struct cpucycles_fork_hold for_fork;
  sigset_t fork_saved_mask;
  volatile unsigned int *epoch_page; /* [0]: the epoch, [1]: claimed */
  unsigned int plain_epoch;          /* where there is no such page */
  unsigned int epoch;                /* this process's (0: none yet) */
} registry = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* A thread's own: its list of open events, and whether it is in the lock. */
static __thread struct {
  struct cpucycles_perf_event *events;
  volatile int mine;
} thread;

/* Read by every perf hot path, apart from the registry (perf-event.h). */
const volatile unsigned int *cpucycles_perf_epoch = &registry.plain_epoch;

static void drop_inherited_locked(void);
static void cpucycles_perf_close_locked(struct cpucycles_perf_event *ev);

static void set_up_epoch_locked(void)
{
  size_t size = cpucycles_perf_page_size();
  void *page;
  if (registry.epoch) return;
  registry.epoch = 1;
  page = mmap(0, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page != MAP_FAILED) {
    if (madvise(page, size, MADV_WIPEONFORK) == 0) {
      volatile unsigned int *words = page;
      /* filled in before it is published: a 0 epoch means a child */
      __atomic_store_n(&words[1], 1, __ATOMIC_RELAXED);
      __atomic_store_n(&words[0], registry.epoch, __ATOMIC_RELAXED);
      __atomic_store_n(&registry.epoch_page, words, __ATOMIC_RELEASE);
      __atomic_store_n(&cpucycles_perf_epoch, words, __ATOMIC_RELEASE);
      return;
    }
    munmap(page, size);
  }
  __atomic_store_n(&registry.plain_epoch, registry.epoch, __ATOMIC_RELEASE);
}

/* In a child whose page was wiped. */
static void next_epoch(void)
{
  registry.epoch += 1;
  if (registry.epoch == 0) registry.epoch = 1;
  __atomic_store_n(&registry.epoch_page[1], 1, __ATOMIC_RELAXED);
  __atomic_store_n(&registry.epoch_page[0], registry.epoch, __ATOMIC_RELEASE);
}

/* In a child made without the fork handlers (the page reads 0), the first
 * caller adopts the process; the others wait for it. */
static void adopt_if_child(void)
{
  volatile unsigned int *page = __atomic_load_n(&registry.epoch_page, __ATOMIC_ACQUIRE);
  if (!page || __atomic_load_n(&page[0], __ATOMIC_ACQUIRE) != 0) return;
  if (__atomic_exchange_n(&page[1], 1, __ATOMIC_ACQ_REL) == 0) {
    static const pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&registry.lock, &fresh, sizeof registry.lock);
    drop_inherited_locked();
    next_epoch();
    return;
  }
  while (__atomic_load_n(&page[0], __ATOMIC_ACQUIRE) == 0) sched_yield();
}

/* 0 with the registry held; -1 in a signal handler whose thread holds it
 * already (the open fails, the close waits for a later one). */
static int cpucycles_perf_lock(void)
{
  if (cpucycles_fork_hold_mine(&registry.for_fork)) return 0;
  if (thread.mine) return -1;
  thread.mine = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  adopt_if_child();
  pthread_mutex_lock(&registry.lock);
  return 0;
}

static void cpucycles_perf_unlock(void)
{
  if (cpucycles_fork_hold_mine(&registry.for_fork)) return;
  pthread_mutex_unlock(&registry.lock);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  thread.mine = 0;
}

/* Fork's prepare handler: every signal blocked, no thread-local. */
static void lock_masked(sigset_t *saved)
{
  sigset_t all;
  sigfillset(&all);
  if (pthread_sigmask(SIG_BLOCK, &all, saved) != 0) sigemptyset(saved);
  adopt_if_child();
  pthread_mutex_lock(&registry.lock);
}

static void unlock_masked(const sigset_t *saved)
{
  pthread_mutex_unlock(&registry.lock);
  pthread_sigmask(SIG_SETMASK, saved, 0);
}

static void close_thread_events(void *unused)
{
  (void) unused;
  if (cpucycles_perf_lock() != 0) return;
  /* (a head not linked: dropped by a thread that adopted a child) */
  while (thread.events && thread.events->linked)
    cpucycles_perf_close_locked(thread.events);
  thread.events = 0;
  cpucycles_perf_unlock();
}

/* At load: before main() in a program linked with the library, at
 * dlopen() in a plug-in host. */
__attribute__((constructor)) static void create_thread_key(void)
{
  if (registry.key_state == 0)
    registry.key_state =
      pthread_key_create(&registry.key, close_thread_events) == 0 ? 1 : -1;
}

/* Under the lock: put ev on its thread's list and the process's (-1: no
 * thread key, nobody would close it); take it off. */
static int cpucycles_perf_link_locked(struct cpucycles_perf_event *ev)
{
  if (registry.key_state != 1) return -1;
  if (pthread_setspecific(registry.key, ev) != 0) return -1;
  set_up_epoch_locked();
  ev->epoch = registry.epoch;
  if (thread.events && !thread.events->linked) thread.events = 0;
  ev->next = thread.events;
  thread.events = ev;
  ev->all_next = registry.all;
  registry.all = ev;
  registry.held += 1 + ev->more;
  ev->linked = 1;
  __atomic_store_n(&registry.ever_linked, 1, __ATOMIC_RELAXED);
  return 0;
}

static void cpucycles_perf_unlink_locked(struct cpucycles_perf_event *ev)
{
  struct cpucycles_perf_event **p;
  if (!ev->linked) return;
  for (p = &thread.events; *p; p = &(*p)->next)
    if (*p == ev) {
      *p = ev->next;
      break;
    }
  for (p = &registry.all; *p; p = &(*p)->all_next)
    if (*p == ev) {
      *p = ev->all_next;
      registry.held -= 1 + ev->more;
      break;
    }
  ev->next = 0;
  ev->all_next = 0;
  ev->linked = 0;
  /* the key's value non-null exactly while events remain */
  if (registry.key_state == 1) pthread_setspecific(registry.key, thread.events);
}

int cpucycles_perf_ever_linked(void)
{
  return __atomic_load_n(&registry.ever_linked, __ATOMIC_RELAXED);
}

/* Off the lists, then the event's own close. */
static void cpucycles_perf_close_locked(struct cpucycles_perf_event *ev)
{
  cpucycles_perf_unlink_locked(ev);
  cpucycles_perf_event_close(ev);
}

int cpucycles_perf_open(struct cpucycles_perf_event *ev, int map_page,
                        unsigned long long config1)
{
  int result;
  if (cpucycles_perf_lock() != 0) {
    errno = EDEADLK; /* a signal handler of a thread in the registry */
    return -1;
  }
  if (cpucycles_perf_ever_linked()) cpucycles_perf_close_locked(ev);
  result = cpucycles_perf_event_open(ev, map_page, config1, registry.held);
  if (result == 0 && cpucycles_perf_link_locked(ev) != 0) {
    cpucycles_perf_event_close(ev); /* nobody would close it */
    result = -1;
  }
  cpucycles_perf_unlock();
  return result;
}

/* ev open in another process: a child made without the fork handlers. */
static int inherited(const struct cpucycles_perf_event *ev)
{
  return cpucycles_perf_is_open(ev) && ev->epoch != cpucycles_perf_current_epoch();
}

int cpucycles_perf_open_once(struct cpucycles_perf_event *ev, int map_page,
                             unsigned long long config1)
{
  unsigned long long kind = cpucycles_perf_kind(map_page, config1);
  if (inherited(ev)) {
    if (cpucycles_perf_lock() != 0) return 0; /* adopts the process: */
    if (inherited(ev)) cpucycles_perf_forget(ev); /* dropped, not listed */
    cpucycles_perf_unlock();
  }
  /* another perf counter's (the probe sets each up in turn): closed, or
   * left where a signal handler of a thread in the lock cannot close it
   * (the reader falls back) */
  if (ev->state != CPUCYCLES_PERF_UNOPENED && ev->kind != kind) cpucycles_perf_close(ev);
  if (ev->state != CPUCYCLES_PERF_UNOPENED) return 0;
  if (cpucycles_perf_open(ev, map_page, config1) == 0) return 1;
  /* (refused in a signal handler: tried again on a later read) */
  if (errno != EDEADLK) {
    ev->state = CPUCYCLES_PERF_FALLBACK;
    ev->kind = kind;
  }
  return 0;
}

void cpucycles_perf_close(struct cpucycles_perf_event *ev)
{
  /* nothing open or listed (never, or refused): only this thread changes
   * its event, no lock */
  if (!ev->linked && !cpucycles_perf_is_open(ev)) {
    cpucycles_perf_forget(ev);
    return;
  }
  /* none ever linked: this thread is opening the first, under the lock */
  if (!cpucycles_perf_ever_linked()) return;
  if (cpucycles_perf_lock() != 0) return; /* left open, for a later close */
  cpucycles_perf_close_locked(ev);
  cpucycles_perf_unlock();
}

int cpucycles_perf_core_pmus(struct cpucycles_pmu *pmus, int max)
{
  int found;
  if (cpucycles_perf_lock() != 0) return -1;
  found = cpucycles_perf_event_pmus(pmus, max);
  cpucycles_perf_unlock();
  return found;
}

/* In a child: every listed descriptor counts one of the parent's threads,
 * closed where still its own, and forgotten.  Pages stay mapped: they were
 * not copied (VM_DONTCOPY) and their addresses may hold another mapping
 * by now.  The forking thread's events become UNOPENED: its next read
 * opens the child's own. */
static void drop_inherited_locked(void)
{
  struct cpucycles_perf_event *ev, *next;
  for (ev = registry.all; ev; ev = next) {
    next = ev->all_next;
    cpucycles_perf_close_fds(ev);
    ev->next = 0;
    ev->all_next = 0;
    ev->linked = 0;
    cpucycles_perf_forget(ev);
  }
  registry.all = 0;
  registry.held = 0;
  if (!registry.ever_linked) return;
  thread.events = 0;
  if (registry.key_state == 1) pthread_setspecific(registry.key, 0);
}

void cpucycles_perf_fork_prepare(void)
{
  lock_masked(&registry.fork_saved_mask);
  cpucycles_fork_hold_take(&registry.for_fork);
}

void cpucycles_perf_fork_parent(void)
{
  cpucycles_fork_hold_drop(&registry.for_fork);
  unlock_masked(&registry.fork_saved_mask);
}

void cpucycles_perf_fork_child(void)
{
  drop_inherited_locked();
  if (registry.epoch_page &&
      __atomic_load_n(&registry.epoch_page[0], __ATOMIC_RELAXED) == 0)
    next_epoch(); /* wiped: a child */
  cpucycles_fork_hold_drop(&registry.for_fork);
  unlock_masked(&registry.fork_saved_mask);
}

void cpucycles_perf_atfork_child(struct cpucycles_perf_event *ev)
{
  if (cpucycles_perf_lock() != 0) return;
  drop_inherited_locked();
  /* not listed: a FALLBACK event, or one of a thread's own making */
  if (registry.ever_linked) cpucycles_perf_forget(ev);
  cpucycles_perf_unlock();
}

#else

typedef int cpucycles_perf_registry_unavailable;

#endif
