/* The public symbols and the lazy, thread-safe first call.
 *
 * cpucycles starts out pointing at init_then_read().  The first call from
 * any thread runs the probe exactly once (pthread_once; InitOnceExecuteOnce
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

#ifndef _WIN32
static pthread_once_t once = PTHREAD_ONCE_INIT;
#endif
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
  char line[256];
  (void) unused;
  fflush(stdout);
  int len = snprintf(line, sizeof line,
                     "cpucycles tracesetup %d %s precision %lld scaling %f only32 %d\n",
                     r->index, r->name, r->precision, r->scaling,
                     r->info.only32);
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

/* fork() waits while another thread probes.  A child forked in the middle
 * of the probe would inherit the probe's crash handlers as its own (the
 * probing thread, which restores them, does not exist in the child) and
 * the descriptors of counters being tried.  So the probe runs under
 * probing, and fork's prepare handler takes it: the child sees either no
 * probe or a finished one.  Registered before the probe starts, outside
 * the lock: glibc runs prepare handlers holding its own atfork lock, which
 * pthread_atfork also takes. */
#ifndef _WIN32 /* Windows has no fork() */
static pthread_mutex_t probing = PTHREAD_MUTEX_INITIALIZER;

static void on_fork_prepare(void)
{
  pthread_mutex_lock(&probing);
}

static void on_fork_parent(void)
{
  pthread_mutex_unlock(&probing);
}

static void on_fork_child(void)
{
  pthread_mutex_unlock(&probing);
  if (chosen->atfork_child) chosen->atfork_child();
}
#endif

static void initialise(void)
{
  struct choice choice;
  long long (*fn)(void);

#ifndef _WIN32
  pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
  pthread_mutex_lock(&probing);
#endif
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
#ifndef _WIN32
  pthread_mutex_unlock(&probing);
#endif
}

/* Runs initialise() exactly once; every caller returns after it ended. */
static void initialise_once(void)
{
#ifdef _WIN32
  cpucycles_once_windows(initialise);
#else
  pthread_once(&once, initialise);
#endif
}

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
