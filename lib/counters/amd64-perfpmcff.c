/* amd64-perfpmcff: rdpmc of Intel's fixed counter 1 (unhalted core cycles)
 * behind a perf event of the thread's own, which makes user rdpmc legal
 * (sysfs rdpmc 1 or 2) and the count the thread's: the raw counter is read
 * only while the event's page says the kernel put the event there (the
 * NMI watchdog or nobody may own it otherwise).  Without the page's offset
 * the value drops by 2^47 every 2^47 cycles (about ten hours at 4 GHz).
 * A thread whose event is elsewhere (a general-purpose counter; AMD has no
 * fixed counters) reads through its page like amd64-perfpmc; setup refuses
 * that placement and hybrid CPUs.  doc/perf-counters.md. */
#if !defined(__x86_64__) || !defined(__linux__)
#error "amd64-perfpmcff needs Linux on an x86-64 CPU"
#endif

#include "perf.h" /* first: config.h, _GNU_SOURCE, <linux/perf_event.h> */

#ifndef CPUCYCLES_PERF_AVAILABLE
#error "amd64-perfpmcff needs lib/perf.c's perf_event support"
#endif

#include <sys/syscall.h>
#if !defined(__NR_perf_event_open)
#error "amd64-perfpmcff needs the perf_event_open system call"
#endif

#include <x86intrin.h> /* __rdpmc: the rdpmc instruction, edx:eax */
#include <errno.h>
#include "counter.h"

/* rdpmc's ecx for fixed counter 1, and the page's index for an event the
 * kernel placed on it (the page gives the rdpmc argument plus one). */
#define FIXED_CYCLES (1u << 30 | 1u)
#define FIXED_CYCLES_INDEX (FIXED_CYCLES + 1u)

/* FIXED_CYCLES on the hot path; through the page, any counter. */
static inline unsigned long long rdpmc(unsigned int counter)
{
  return (unsigned long long) __rdpmc((int) counter);
}

/* Whether the kernel put this thread's event on fixed counter 1.  Never
 * with one event per core type (OPEN_EACH_PMU): the raw counter would
 * count whichever core type the thread is on. */
static int on_fixed_counter(const struct cpucycles_perf_event *ev)
{
  return ev->state == CPUCYCLES_PERF_OPEN && ev->page->cap_user_rdpmc &&
         ev->page->index == FIXED_CYCLES_INDEX;
}

/* A thread's first read opens its event and notes whether the raw fixed
 * counter is its own. */
static __attribute__((noinline)) long long perfpmcff_slow(void)
{
  struct cpucycles_perf_event *ev = &cpucycles_perf_thread_event;
  if (cpucycles_perf_open_once(ev, 1, 0)) ev->fast = on_fixed_counter(ev);
  if (ev->fast) return (long long) rdpmc(FIXED_CYCLES);
  return cpucycles_perf_read(ev, rdpmc, 0);
}

static long long perfpmcff_read(void)
{
  /* (the epoch: not in a child made without fork handlers: perf-internal.h) */
  const struct cpucycles_perf_event *ev = &cpucycles_perf_thread_event;
  if (__builtin_expect(ev->fast && ev->epoch == cpucycles_perf_current_epoch(), 1))
    return (long long) rdpmc(FIXED_CYCLES);
  return perfpmcff_slow();
}

static int perfpmcff_setup(struct counter_info *info)
{
  struct cpucycles_perf_event *ev;
  if (cpucycles_perf_can_open(info, 0) != 0) return -1;
  ev = &cpucycles_perf_thread_event; /* (first touched here) */
  if (cpucycles_perf_open(ev, 1, 0) != 0)
    return counter_refuse(info, CPUCYCLES_REFUSAL_PERF_OPEN, errno);
  /* A hybrid CPU: amd64-perfpmc sums the core types' events. */
  if (ev->state == CPUCYCLES_PERF_OPEN_EACH_PMU)
    return cpucycles_perf_refuse(ev, info, CPUCYCLES_PERF_REFUSAL_HYBRID, 0);
  /* (amd64-perfpmc's or default-perfevent's machine) */
  if (!on_fixed_counter(ev))
    return cpucycles_perf_refuse(ev, info, CPUCYCLES_REFUSAL_NOT_FIXED, 0);
  ev->fast = 1;
  /* A hypervisor may trap RDPMC though the page offers it: not tried
   * here, where nothing is armed; the probe tries the reads caught. */
  info->may_fault = 1;
  return counter_accept(info, COUNTER_ONCORE, 0, 0);
}

const struct counter cpucycles_counter_amd64_perfpmcff = {
  "amd64-perfpmcff", perfpmcff_read, perfpmcff_setup,
  cpucycles_perf_counter_release, cpucycles_perf_counter_atfork_child,
  COUNTER_ASKS
};
