/* amd64-perfpmcff: rdpmc of fixed-function performance counter 1 (ecx =
 * 1<<30 | 1), which on Intel CPUs counts unhalted core cycles, behind a
 * perf event of the thread's own: one instruction on the hot path, no
 * page, no sequence lock.  (amd64-pmcff is the same instruction with no
 * perf event, where the kernel lets every process use it.)
 *
 * rdpmc only works in user mode when the kernel sets CR4.PCE, and fixed
 * counter 1 only counts when someone has programmed it.  Linux's
 * /sys/bus/event_source/devices/cpu/rdpmc decides the first: 0 never; 1
 * (the default) only while the process has a perf event mmap()ed; 2 always.
 * Under 2 the fixed counter may still be counting nobody, or counting for
 * the NMI watchdog (a sampling event restarted every few seconds: the raw
 * value would jump back).  So this counter does not rely on either: like
 * amd64-perfpmc, each thread opens and maps its own user-mode cycles event,
 * which makes rdpmc legal under 1 and 2, and uses the raw fixed counter
 * only when the event's page says the kernel put the event there
 * (index == (1<<30 | 1) + 1).  Then the fixed counter holds this thread's
 * count while the thread runs: the kernel saves it when switching the thread
 * out and reprograms it when switching back in.
 *
 * What the raw value lacks compared with amd64-perfpmc is the page's offset:
 * the kernel keeps the counter between 2^47 and 2^48 and, every 2^47 cycles
 * (about ten hours of one thread's user-mode time at 4 GHz), takes it back
 * by 2^47.  A thread whose event the kernel put elsewhere (a general-purpose
 * counter, because the fixed counter is taken; always so on AMD CPUs, which
 * have no fixed counters) reads the event through its page instead, as
 * amd64-perfpmc does; setup refuses such a placement in the probe thread.
 * Setup also refuses a hybrid CPU, where the thread has one event per core
 * type and the raw counter is the count of whichever type it is on.
 * See doc/perf-counters.md. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#if !defined(__x86_64__) || !defined(__linux__)
#error "amd64-perfpmcff needs Linux on an x86-64 CPU"
#endif

#include <linux/perf_event.h>
#include <sys/syscall.h>

#if !defined(__NR_perf_event_open)
#error "amd64-perfpmcff needs the perf_event_open system call"
#endif

#include <x86intrin.h> /* __rdpmc: the rdpmc instruction, edx:eax */
#include <errno.h>

#include "counter.h"
#include "perf.h"

#ifndef CPUCYCLES_PERF_AVAILABLE
#error "amd64-perfpmcff needs lib/perf.c's perf_event support"
#endif

/* rdpmc's ecx for fixed counter 1, and the page's index for an event the
 * kernel placed on it (the page gives the rdpmc argument plus one). */
#define FIXED_CYCLES (1u << 30 | 1u)
#define FIXED_CYCLES_INDEX (FIXED_CYCLES + 1u)

static __thread struct cpucycles_perf_event event;

/* Read counter `counter`: FIXED_CYCLES on the hot path, a general-purpose
 * counter through the page for a thread whose event is elsewhere. */
static inline unsigned long long rdpmc(unsigned int counter)
{
  return (unsigned long long) __rdpmc((int) counter);
}

/* Whether the kernel put this thread's (open) event on fixed counter 1,
 * where user rdpmc may read it raw.  Never on a hybrid CPU, where the
 * thread has one event per core type (OPEN_EACH_PMU): the raw counter
 * would be the count of whichever core type the thread is on. */
static int on_fixed_counter(void)
{
  return event.state == CPUCYCLES_PERF_OPEN && event.page->cap_user_rdpmc &&
         event.page->index == FIXED_CYCLES_INDEX;
}

/* A thread's first read opens its event (lib/perf.c) and notes whether the
 * raw fixed counter is its own; a thread whose event is elsewhere reads
 * through the page, or read(2), or the clock, as amd64-perfpmc does. */
static __attribute__((noinline)) long long perfpmcff_slow(void)
{
  if (cpucycles_perf_open_once(&event, 1, 0)) event.fast = on_fixed_counter();
  if (event.fast) return (long long) rdpmc(FIXED_CYCLES);
  return cpucycles_perf_read(&event, rdpmc, 0);
}

static long long perfpmcff_read(void)
{
  /* (the epoch: not in a child made without fork handlers, lib/perf.h) */
  if (__builtin_expect(event.fast && event.epoch == cpucycles_perf_current_epoch(), 1))
    return (long long) rdpmc(FIXED_CYCLES);
  return perfpmcff_slow();
}

static int perfpmcff_setup(struct counter_info *info)
{
  if (cpucycles_perf_open(&event, 1, 0) != 0)
    return counter_refuse(info, CPUCYCLES_REFUSAL_PERF_OPEN, errno);
  if (event.state == CPUCYCLES_PERF_OPEN_EACH_PMU) {
    /* A hybrid CPU: amd64-perfpmc sums the core types' events. */
    cpucycles_perf_close(&event);
    return counter_refuse(info, CPUCYCLES_PERF_REFUSAL_HYBRID, 0);
  }
  if (!on_fixed_counter()) {
    /* Not on the fixed counter here (or no user rdpmc at all):
     * amd64-perfpmc, or default-perfevent, is the counter for this
     * machine. */
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

static void perfpmcff_release(void) { cpucycles_perf_close(&event); }
static void perfpmcff_atfork_child(void) { cpucycles_perf_atfork_child(&event); }

const struct counter cpucycles_counter_amd64_perfpmcff = {
  "amd64-perfpmcff", perfpmcff_read, perfpmcff_setup, perfpmcff_release, perfpmcff_atfork_child, COUNTER_ASKS
};
