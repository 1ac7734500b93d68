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

static __thread struct cpucycles_perf_event event;

/* FIXED_CYCLES on the hot path; through the page, any counter. */
static inline unsigned long long rdpmc(unsigned int counter)
{
  return (unsigned long long) __rdpmc((int) counter);
}

/* Whether the kernel put this thread's event on fixed counter 1.  Never
 * with one event per core type (OPEN_EACH_PMU): the raw counter would
 * count whichever core type the thread is on. */
static int on_fixed_counter(void)
{
  return event.state == CPUCYCLES_PERF_OPEN && event.page->cap_user_rdpmc &&
         event.page->index == FIXED_CYCLES_INDEX;
}

/* A thread's first read opens its event and notes whether the raw fixed
 * counter is its own. */
static __attribute__((noinline)) long long perfpmcff_slow(void)
{
  if (cpucycles_perf_open_once(&event, 1, 0)) event.fast = on_fixed_counter();
  if (event.fast) return (long long) rdpmc(FIXED_CYCLES);
  return cpucycles_perf_read(&event, rdpmc, 0);
}

static long long perfpmcff_read(void)
{
  /* (the epoch: not in a child made without fork handlers: perf-internal.h) */
  if (__builtin_expect(event.fast && event.epoch == cpucycles_perf_current_epoch(), 1))
    return (long long) rdpmc(FIXED_CYCLES);
  return perfpmcff_slow();
}

static int perfpmcff_setup(struct counter_info *info)
{
  if (cpucycles_perf_can_open(info, 0) != 0) return -1;
  if (cpucycles_perf_open(&event, 1, 0) != 0)
    return counter_refuse(info, CPUCYCLES_REFUSAL_PERF_OPEN, errno);
  if (event.state == CPUCYCLES_PERF_OPEN_EACH_PMU) {
    /* A hybrid CPU: amd64-perfpmc sums the core types' events. */
    cpucycles_perf_close(&event);
    return counter_refuse(info, CPUCYCLES_PERF_REFUSAL_HYBRID, 0);
  }
  if (!on_fixed_counter()) {
    /* (amd64-perfpmc's or default-perfevent's machine) */
    cpucycles_perf_close(&event);
    return counter_refuse(info, CPUCYCLES_REFUSAL_NOT_FIXED, 0);
  }
  event.fast = 1;
  /* A hypervisor may trap RDPMC though the page offers it: not tried
   * here, where nothing is armed; the probe tries the reads caught. */
  info->may_fault = 1;
  info->kind = COUNTER_ONCORE;
  info->frequency = 0;
  info->only32 = 0;
  return 0;
}

static void perfpmcff_release(void) { if (cpucycles_perf_ever_linked()) cpucycles_perf_close(&event); }
static void perfpmcff_atfork_child(void) { cpucycles_perf_atfork_child(&event); }

const struct counter cpucycles_counter_amd64_perfpmcff = {
  "amd64-perfpmcff", perfpmcff_read, perfpmcff_setup, perfpmcff_release, perfpmcff_atfork_child, COUNTER_ASKS
};
