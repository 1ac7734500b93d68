/* amd64-perfpmcff: rdpmc of Intel's fixed counter 1 (unhalted core cycles)
 * behind a perf event of the thread's own, which makes user rdpmc legal
 * (sysfs rdpmc 1 or 2) and the count the thread's.  Every read checks the
 * event's page (cpucycles_perf_read_on: a few loads and compares, no
 * system call): the raw counter is read only while the page says the
 * kernel has the event there (the NMI watchdog, another event or nobody
 * may hold it otherwise), plus the page's offset, so its values are the
 * event's count, as amd64-perfpmc's.  Elsewhere (multiplexed, another
 * counter, none) the read goes through the page or read(2) as
 * amd64-perfpmc's does; setup refuses that placement (AMD has no fixed
 * counters) and hybrid CPUs.  doc/perf-counters.md. */
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

/* The page's index for an event on fixed counter 1: rdpmc's ecx for it,
 * 1 << 30 | 1, plus one. */
#define FIXED_CYCLES_INDEX ((1u << 30 | 1u) + 1u)

static inline unsigned long long rdpmc(unsigned int counter)
{
  return (unsigned long long) __rdpmc((int) counter);
}

static long long perfpmcff_read(void)
{
  return cpucycles_perf_read_on(&cpucycles_perf_thread_event, rdpmc, 0,
                                FIXED_CYCLES_INDEX);
}

static int perfpmcff_setup(struct counter_info *info)
{
  struct cpucycles_perf_event *ev;
  if (cpucycles_perf_can_open(info, 0) != 0) return -1;
  ev = &cpucycles_perf_thread_event; /* (first touched here) */
  if (cpucycles_perf_open(ev, 1, 0) != 0)
    return counter_refuse(info, CPUCYCLES_REFUSAL_PERF_OPEN, errno);
  /* A hybrid CPU: the raw counter would count whichever core type the
   * thread is on; amd64-perfpmc sums the core types' events. */
  if (ev->state == CPUCYCLES_PERF_OPEN_EACH_PMU)
    return cpucycles_perf_refuse(ev, info, CPUCYCLES_PERF_REFUSAL_HYBRID, 0);
  /* (amd64-perfpmc's or default-perfevent's machine) */
  if (!ev->page->cap_user_rdpmc || ev->page->index != FIXED_CYCLES_INDEX)
    return cpucycles_perf_refuse(ev, info, CPUCYCLES_REFUSAL_NOT_FIXED, 0);
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
