/* perf.h: what the perf_event counters share (doc/perf-counters.md), its
 * read path and setup (perf.c) above perf-registry.h.  An event opened
 * with pid 0, cpu -1 counts the calling thread only, so each thread has
 * one struct cpucycles_perf_event (doc/security.md, "Static TLS"), opened
 * on the thread's first read and closed at thread exit and in a fork
 * child (perf-registry.c).  The counters differ only in the instruction
 * that reads the counter the page names and in attr.config1 (arm64). */
#ifndef CPUCYCLES_PERF_H
#define CPUCYCLES_PERF_H

#include "perf-registry.h" /* first: config.h, _GNU_SOURCE */

#ifdef CPUCYCLES_PERF_AVAILABLE

/* The calling thread's event, shared by the perf counters: one of them is
 * chosen, the others only set up in turn by the probe, so one event a
 * thread is all they need; a read by a counter of another kind closes and
 * reopens it (cpucycles_perf_open_once). */
extern __thread struct cpucycles_perf_event cpucycles_perf_thread_event
  __attribute__((visibility("hidden")));

/* A thread without an event: CLOCK_MONOTONIC since the second of the
 * process's first fallback read, scaled by the estimate set_persecond
 * stores (which reads no clock): monotone, in the other threads' unit,
 * no overflow. */
long long cpucycles_perf_fallback(void);
void cpucycles_perf_set_persecond(long long persecond);

#define CPUCYCLES_PERF_REFUSAL_STUCK \
  "perf event count stuck at 0, also after disable and enable"
#define CPUCYCLES_PERF_REFUSAL_PMUS \
  "more core PMUs than the perf counters open events on"
#define CPUCYCLES_PERF_REFUSAL_HYBRID \
  "a hybrid CPU: the fixed counter counts one core type only"

struct counter_info;

/* The slow path of cpucycles_perf_read_fast(): opens the thread's event
 * on its first read (mapped with rdpmc), then reads the page with rdpmc,
 * else read(2); rdpmc 0 (default-perfevent): read(2) only, and a new
 * event must count, as in setup.  OPEN_EACH_PMU: the sum of the events.
 * A count that stops, goes back, or whose descriptor is lost: perf.c. */
long long cpucycles_perf_read(struct cpucycles_perf_event *ev,
                              cpucycles_perf_rdpmc_fn rdpmc,
                              unsigned long long config1);

/* A perf counter's setup, in the probe thread: open ev (mapped with rdpmc)
 * or refuse.  With rdpmc, refuse a page without cap_user_rdpmc, never run
 * rdpmc (a hypervisor may trap it): on-core, may_fault.  Without, the
 * event's read(2) must count (CPUCYCLES_PERF_REFUSAL_STUCK). */
int cpucycles_perf_setup(struct cpucycles_perf_event *ev,
                         cpucycles_perf_rdpmc_fn rdpmc,
                         unsigned long long config1,
                         struct counter_info *info);

/* Close ev and refuse: why, with err (taken before the close). */
int cpucycles_perf_refuse(struct cpucycles_perf_event *ev, struct counter_info *info,
                          const char *why, int err);

/* The same for the thread's event, a plain event opened first with no
 * thread-local touched (cpucycles_perf_can_open); and a perf counter's
 * release and atfork_child, which close and drop the thread's event. */
int cpucycles_perf_counter_setup(cpucycles_perf_rdpmc_fn rdpmc,
                                 unsigned long long config1,
                                 struct counter_info *info);
void cpucycles_perf_counter_release(void);
void cpucycles_perf_counter_atfork_child(void);

/* The hot path of the page-reading counters, inlined into each with its
 * TLS event and its rdpmc: one state, kind and epoch test, the page loop
 * (perf-event.h), the instruction, the base (perf.c); anything else (a
 * hybrid CPU's events too) the slow path.  only: the page's index the
 * counter's own instruction reads (0: any, as the page says). */
static inline long long cpucycles_perf_read_on(
    struct cpucycles_perf_event *ev, cpucycles_perf_rdpmc_fn rdpmc,
    unsigned long long config1, unsigned int only)
{
  long long count, base = ev->base; /* before the loop: one TLS access */
  if (__builtin_expect(ev->state == CPUCYCLES_PERF_OPEN &&
                       ev->kind == cpucycles_perf_kind(1, config1) &&
                       ev->epoch == cpucycles_perf_current_epoch(), 1) &&
      cpucycles_perf_page_count(ev->page, rdpmc, &count, 0, only) == 0)
    return (long long) ((unsigned long long) count + (unsigned long long) base);
  return cpucycles_perf_read(ev, rdpmc, config1);
}

static inline long long cpucycles_perf_read_fast(
    struct cpucycles_perf_event *ev, cpucycles_perf_rdpmc_fn rdpmc,
    unsigned long long config1)
{
  return cpucycles_perf_read_on(ev, rdpmc, config1, 0);
}

#endif /* CPUCYCLES_PERF_AVAILABLE */

#endif
