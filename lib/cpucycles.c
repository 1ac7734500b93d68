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
#include "annotate.h"
#include "environment.h"
#include "forkhold.h"
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

/* libcpucycles prints its trace with stdio, so the lines come in order
 * with whatever the caller printed before its first call.  Ours flush the
 * caller's stdout first and are then written with write(2), which gives
 * the same order without letting stdio allocate a buffer for stdout.
 *
 * The probe runs under the library's lock, and another thread may hold
 * stdout's lock meanwhile (flockfile, or in the middle of a printf) and
 * then call cpucycles(), which waits for the probe: waiting for stdout's
 * lock there would wait forever.  So stdout is flushed only when its lock
 * is free (or already the caller's); otherwise this line's numbers and
 * the next ones' are kept and written, in one piece, once the first call
 * is over and the library's lock released, after flushing stdout then.
 * Windows has no try-lock for stdio: the lines always wait there.  The
 * state is static, not on the first call's stack; only the first call,
 * under the library's lock, traces. */
#define TRACE_KEPT 32 /* lines: more than any ISA's list */
static struct {
  volatile int on;   /* cpucycles_tracesetup() was called */
  int keeping;       /* once one line is kept, the next ones are too */
  int kept;
  struct trace_line {
    const char *name;
    long long precision;
    double scaling;
    int index, only32;
  } lines[TRACE_KEPT];
  char text[512];    /* room for any double in "%f" (317 characters) */
} trace;

static void write_out(const char *p, size_t len)
{
  while (len > 0) {
    ssize_t w = write(1, p, len);
    if (w <= 0) break;
    p += w;
    len -= (size_t) w;
  }
}

static void write_line(const struct trace_line *l)
{
  int len = snprintf(trace.text, sizeof trace.text,
                     "cpucycles tracesetup %d %s precision %lld scaling %f only32 %d\n",
                     l->index, l->name, l->precision, l->scaling, l->only32);
  if (len > 0 && (size_t) len < sizeof trace.text) write_out(trace.text, (size_t) len);
}

/* stdout flushed, if that needs no wait; 1 when done. */
static int flush_stdout_without_waiting(void)
{
#ifdef _WIN32
  return 0;
#else
  if (ftrylockfile(stdout) != 0) return 0;
  fflush(stdout);
  funlockfile(stdout);
  return 1;
#endif
}

static void trace_report(const struct probe_report *r, void *unused)
{
  struct trace_line l = { r->name, r->precision, r->scaling, r->index, r->info.only32 };
  int i;
  (void) unused;
  if (!trace.keeping && flush_stdout_without_waiting()) {
    write_line(&l);
    return;
  }
  trace.keeping = 1;
  if (trace.kept == TRACE_KEPT) {
    /* no room (never with this library's lists): out with the rest, in
     * order, unflushed */
    for (i = 0; i < trace.kept; i++) write_line(&trace.lines[i]);
    trace.kept = 0;
  }
  trace.lines[trace.kept++] = l;
}

/* The kept lines, after stdout is flushed (may_wait: stdout's lock may be
 * waited for, the library's lock is not held), once: the first thread to
 * get here after the first call writes them. */
static void trace_write_kept(int may_wait)
{
  int i;
  if (!__atomic_exchange_n(&trace.keeping, 0, __ATOMIC_ACQ_REL)) return;
  if (may_wait) fflush(stdout);
  else flush_stdout_without_waiting();
  for (i = 0; i < trace.kept; i++) write_line(&trace.lines[i]);
  trace.kept = 0;
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
 * pthread_atfork also takes.
 *
 * The program's own fork handlers may run while fork holds probing (those
 * registered before a dlopen of the library, see forkhold.h) and make the
 * first call there: the forking thread then makes it without taking
 * probing, which it holds already. */
#ifndef _WIN32 /* Windows has no fork() */
static pthread_mutex_t probing = PTHREAD_MUTEX_INITIALIZER;
static struct cpucycles_fork_hold probing_for_fork;
static int initialised;

static void on_fork_prepare(void)
{
  pthread_mutex_lock(&probing);
  cpucycles_fork_hold_take(&probing_for_fork);
#ifdef CPUCYCLES_PERF_AVAILABLE
  cpucycles_perf_fork_prepare();
#endif
}

static void on_fork_parent(void)
{
#ifdef CPUCYCLES_PERF_AVAILABLE
  cpucycles_perf_fork_parent();
#endif
  cpucycles_fork_hold_drop(&probing_for_fork);
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
  cpucycles_fork_hold_drop(&probing_for_fork);
  pthread_mutex_unlock(&probing);
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
  pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
}
#endif

static const struct probe_observer *observer;

void cpucycles_probe_observe(const struct probe_observer *o)
{
  observer = o;
}

static void report_line(const struct probe_report *r, void *unused)
{
  if (trace.on) trace_report(r, unused);
  if (observer) observer->counter(r, observer->arg);
}

static void initialise(void)
{
  struct choice choice;
  long long (*fn)(void);
  const struct probe_observer *o = observer;

  persecond = cpucycles_persecond_estimate_reported(o ? o->root : "",
                                                    cpucycles_environment("cpucyclespersecond"),
                                                    o ? o->source : 0, o ? o->arg : 0);
#ifdef CPUCYCLES_PERF_AVAILABLE
  /* a thread refused its own perf event counts clock time in cycles */
  cpucycles_perf_set_persecond(persecond);
#endif
  cpucycles_select(cpucycles_counter_table, cpucycles_counter_count, persecond,
                   cpucycles_environment("CPUCYCLES_COUNTER"),
                   trace.on || o ? report_line : 0,
                   0, &choice);
  chosen = choice.counter;
  fn = cpucycles_adapter_for(&choice, persecond);
  /* The ABI's plain pointer, which callers load without atomics (see
   * annotate.h; tests/tsan.supp says the same to ThreadSanitizer).  What
   * the published function reads is ordered by initialised or active. */
  CPUCYCLES_ATOMIC(&cpucycles, sizeof cpucycles);
  __atomic_store_n(&cpucycles, fn, __ATOMIC_RELEASE);
}

#ifdef _WIN32
/* Runs initialise() exactly once; every caller returns after it ended. */
static void initialise_once(void)
{
  cpucycles_once_windows(initialise);
  trace_write_kept(1);
}
#else
/* The first call is over: what it set is seen by every thread that reads
 * initialised with acquire and sees 1. */
static void publish_initialised(void)
{
  CPUCYCLES_ATOMIC(&initialised, sizeof initialised);
  CPUCYCLES_HAPPENS_BEFORE(&initialised);
  __atomic_store_n(&initialised, 1, __ATOMIC_RELEASE);
}

/* The first call is no cancellation point: a thread cancelled inside it
 * (deferred cancellation: the probe reads files) would die holding
 * probing, and every later first call and fork() would wait forever.
 * Cancellation is disabled for its duration and the caller's state put
 * back; a pending cancellation acts at the caller's next cancellation
 * point. */
static void initialise_once(void)
{
  int cancel_state, mine = 0;

  if (__atomic_load_n(&initialised, __ATOMIC_ACQUIRE)) {
    CPUCYCLES_HAPPENS_AFTER(&initialised);
    return;
  }
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  if (cpucycles_fork_hold_mine(&probing_for_fork)) {
    /* inside fork's handlers, probing held already: no waiting for
     * stdout either */
    if (!__atomic_load_n(&initialised, __ATOMIC_RELAXED)) {
      initialise();
      publish_initialised();
      trace_write_kept(0);
    }
    pthread_setcancelstate(cancel_state, 0);
    return;
  }
  pthread_mutex_lock(&probing);
  if (!__atomic_load_n(&initialised, __ATOMIC_RELAXED)) {
    initialise();
    publish_initialised();
    mine = 1;
  }
  pthread_mutex_unlock(&probing);
  /* outside the lock: stdout's may be waited for */
  if (mine) trace_write_kept(1);
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
  trace.on = 1;
}
