/* The public symbols and the lazy, thread-safe first call.
 *
 * cpucycles starts out pointing at init_then_read().  The first call from
 * any thread runs the probe exactly once (under a mutex; InitOnceExecuteOnce
 * on Windows: threads racing in wait for it), then publishes the chosen
 * counter's function into the pointer with release order.  Every later
 * call goes straight to that function: no lock and no branch on the hot
 * path. */
#include "counter.h" /* first: config.h sets _GNU_SOURCE */
#ifndef _WIN32
#include <pthread.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "adapters.h"
#include "environment.h"
#include "perf.h"
#include "persecond.h"
#include "select.h"

#ifdef _WIN32
#include "once-windows.h"
#endif

#define CPUCYCLES_BUILDING_LIBRARY 1
#pragma GCC visibility push(default)
#include "cpucycles.h"
#pragma GCC visibility pop

static long long init_then_read(void);

long long (*cpucycles)(void) = init_then_read;

static long long persecond;
static const struct counter *chosen = &cpucycles_counter_default_zero;
static volatile int tracing;

/* libcpucycles prints its trace with stdio, so the lines come in order
 * with whatever the caller printed before its first call.  Ours flush the
 * caller's stdout first and are then written with write(2) from a stack
 * buffer, which gives the same order without letting stdio allocate a
 * buffer for stdout when the caller has not printed yet. */
static void trace_line(const struct probe_report *r, void *unused)
{
  char line[512]; /* room for any double in "%f" (up to 317 characters) */
  int len;
  (void) unused;
  fflush(stdout);
  len = snprintf(line, sizeof line,
                 "cpucycles tracesetup %d %s precision %lld scaling %f only32 %d\n",
                 r->index, r->name, r->precision, r->scaling, r->info.only32);
  if (len > 0 && (size_t) len < sizeof line) {
    const char *p = line;
    while (len > 0) {
      ssize_t w = write(1, p, (size_t) len);
      if (w <= 0) break;
      p += w;
      len -= (int) w;
    }
  }
}

/* The first call runs under probing, a mutex, and is over once
 * initialised is set (release; read with acquire by every later call).
 * fork() waits while another thread makes the first call: a child forked
 * in the middle of it would inherit the probe's crash handlers as its own
 * (the probing thread, which restores them, does not exist in the child)
 * and the descriptors of counters being tried.  So fork's prepare handler
 * takes probing too, and the child sees either no first call or a finished
 * one.  pthread_once is not used for the first call: glibc runs an
 * unfinished once routine again in a forked child.
 *
 * The fork handlers are registered when the library is loaded, exactly
 * once, before any thread can make a first call; glibc drops them again
 * when the library is unloaded (dlclose).  They cannot be registered under
 * probing: glibc runs prepare handlers holding its own atfork lock, which
 * pthread_atfork also takes. */
#ifndef _WIN32 /* Windows has no fork() */
static pthread_mutex_t probing = PTHREAD_MUTEX_INITIALIZER;
static int initialised;

static void on_fork_prepare(void)
{
  pthread_mutex_lock(&probing);
#ifdef CPUCYCLES_PERF_AVAILABLE
  cpucycles_perf_fork_prepare();
#endif
}

static void on_fork_parent(void)
{
#ifdef CPUCYCLES_PERF_AVAILABLE
  cpucycles_perf_fork_parent();
#endif
  pthread_mutex_unlock(&probing);
}

static void on_fork_child(void)
{
#ifdef CPUCYCLES_PERF_AVAILABLE
  /* every thread's perf events, not only the chosen counter's in this
   * thread: the other threads do not exist in the child */
  cpucycles_perf_fork_child();
#endif
  if (chosen->atfork_child) chosen->atfork_child();
  pthread_mutex_unlock(&probing);
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
  pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
}
#endif

static void initialise(void)
{
  struct choice choice;
  long long (*fn)(void);

  persecond = cpucycles_persecond_estimate("", cpucycles_environment("cpucyclespersecond"));
#ifdef CPUCYCLES_PERF_AVAILABLE
  /* a thread refused its own perf event counts clock time in cycles */
  cpucycles_perf_set_persecond(persecond);
#endif
  cpucycles_select(cpucycles_counter_table, cpucycles_counter_count, persecond,
                   cpucycles_environment("CPUCYCLES_COUNTER"), tracing ? trace_line : 0,
                   0, &choice);
  chosen = choice.counter;
  fn = cpucycles_adapter_for(&choice, persecond);
  __atomic_store_n(&cpucycles, fn, __ATOMIC_RELEASE);
}

#ifdef _WIN32
/* Runs initialise() exactly once; every caller returns after it ended. */
static void initialise_once(void)
{
  cpucycles_once_windows(initialise);
}
#else
/* The first call is no cancellation point: a thread cancelled inside it
 * (deferred cancellation: the probe reads files) would die holding
 * probing, and every later first call and fork() would wait forever.
 * Cancellation is disabled for its duration and the caller's state put
 * back; a pending cancellation acts at the caller's next cancellation
 * point. */
static void initialise_once(void)
{
  int cancel_state;

  if (__atomic_load_n(&initialised, __ATOMIC_ACQUIRE)) return;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  pthread_mutex_lock(&probing);
  if (!__atomic_load_n(&initialised, __ATOMIC_RELAXED)) {
    initialise();
    __atomic_store_n(&initialised, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&probing);
  pthread_setcancelstate(cancel_state, 0);
}
#endif

static long long init_then_read(void)
{
  initialise_once();
  return __atomic_load_n(&cpucycles, __ATOMIC_ACQUIRE)();
}

long long cpucycles_persecond(void)
{
  initialise_once();
  return persecond;
}

const char *cpucycles_implementation(void)
{
  initialise_once();
  return chosen->name;
}

const char *cpucycles_version(void)
{
  return PACKAGE_VERSION;
}

void cpucycles_tracesetup(void)
{
  tracing = 1;
}
