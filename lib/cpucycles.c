/* The public symbols and the lazy, thread-safe first call: cpucycles
 * starts at init_then_read(), which probes once and publishes the chosen
 * function with release order; later calls take no lock and no branch.
 * doc/security.md ("Threads, fork, signals") gives the reasons below. */
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

/* The trace keeps libcpucycles' order with the caller's stdio output:
 * stdout is flushed, then the line written with write(2) (no stdio buffer
 * allocated).  Another thread may hold stdout's lock and wait in
 * cpucycles() for the probe: so stdout is flushed only when its lock is
 * free, else the lines are kept and written after the first call, outside
 * the library's lock (always so on Windows: no try-lock).  Static, not on
 * the first call's stack; only the first call traces. */
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
    /* no room (never with our lists): out, in order, unflushed */
    for (i = 0; i < trace.kept; i++) write_line(&trace.lines[i]);
    trace.kept = 0;
  }
  trace.lines[trace.kept++] = l;
}

/* The kept lines, once, after flushing stdout (may_wait: the library's
 * lock is not held). */
static void trace_write_kept(int may_wait)
{
  int i;
  if (!__atomic_exchange_n(&trace.keeping, 0, __ATOMIC_ACQ_REL)) return;
  if (may_wait) fflush(stdout);
  else flush_stdout_without_waiting();
  for (i = 0; i < trace.kept; i++) write_line(&trace.lines[i]);
  trace.kept = 0;
}

/* The first call runs under probing and is over once initialised is set
 * (release; acquire by every later call).  fork's prepare handler takes
 * probing too: no child inherits the probe's crash handlers or the
 * descriptors being tried.  Not pthread_once: glibc runs an unfinished
 * once routine again in a forked child.  The handlers are registered at
 * load, not under probing (glibc runs prepare handlers holding its atfork
 * lock, which pthread_atfork takes), and stay (-z nodelete):
 * doc/security.md, "fork" and "Unloading".  The program's own fork
 * handlers may make the first call while fork holds probing (forkhold.h). */
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
  /* The ABI's plain pointer, loaded without atomics by callers
   * (annotate.h, tests/tsan.supp); what the function reads is ordered by
   * initialised or active. */
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
static void publish_initialised(void)
{
  CPUCYCLES_ATOMIC(&initialised, sizeof initialised);
  CPUCYCLES_HAPPENS_BEFORE(&initialised);
  __atomic_store_n(&initialised, 1, __ATOMIC_RELEASE);
}

/* No cancellation point: a thread cancelled inside (the probe reads
 * files) would die holding probing, and every later first call and fork()
 * would wait forever. */
static void initialise_once(void)
{
  int cancel_state, held, mine = 0;
  if (__atomic_load_n(&initialised, __ATOMIC_ACQUIRE)) {
    CPUCYCLES_HAPPENS_AFTER(&initialised);
    return;
  }
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  /* held: in fork's handlers, which hold probing already */
  held = cpucycles_fork_hold_mine(&probing_for_fork);
  if (!held) pthread_mutex_lock(&probing);
  if (!__atomic_load_n(&initialised, __ATOMIC_RELAXED)) {
    initialise();
    publish_initialised();
    mine = 1;
  }
  if (!held) pthread_mutex_unlock(&probing);
  /* stdout's lock may be waited for outside probing only */
  if (mine) trace_write_kept(!held);
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
