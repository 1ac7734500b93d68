/* amd64-perfpmc: the calling thread's CPU cycles from a Linux perf_event
 * (PERF_COUNT_HW_CPU_CYCLES, user mode only), read without a system call:
 * rdpmc of the hardware counter that the event's self-monitoring page
 * names, plus the page's offset, under the page's sequence lock
 * (cpucycles_perf_page_read in lib/perf.h).  An on-core cycle counter,
 * virtualised per thread by the kernel like perfctr's vperfctr.
 *
 * Needs perf_event_paranoid <= 2 (or CAP_PERFMON) and user rdpmc allowed
 * (/sys/bus/event_source/devices/cpu/rdpmc 1, the default, or 2), which the
 * page reports as cap_user_rdpmc.  When the event is momentarily not on a
 * hardware counter (index 0: multiplexed out), the read falls back to
 * read(2) of the descriptor.  Each thread opens its own event on its first
 * read; see doc/perf-counters.md. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#if !defined(__x86_64__) || !defined(__linux__)
#error "amd64-perfpmc needs Linux on an x86-64 CPU"
#endif

#include <linux/perf_event.h>
#include <sys/syscall.h>

#if !defined(__NR_perf_event_open)
#error "amd64-perfpmc needs the perf_event_open system call"
#endif

#include <x86intrin.h> /* __rdpmc: the rdpmc instruction, edx:eax */

#include "counter.h"
#include "perf.h"

#ifndef CPUCYCLES_PERF_AVAILABLE
#error "amd64-perfpmc needs lib/perf.c's perf_event support"
#endif

static __thread struct cpucycles_perf_event event;

/* Read general-purpose counter `counter` (or, with bit 30, a fixed one).
 * x86 needs nothing in attr.config1 for it: user rdpmc is sysfs's switch. */
static inline unsigned long long rdpmc(unsigned int counter)
{
  return (unsigned long long) __rdpmc((int) counter);
}

/* The thread's event, in the shared helpers of lib/perf.c: the page read
 * with rdpmc on the hot path (inline), read(2) when the page says no, the
 * clock for a thread the kernel refuses an event. */
static long long perfpmc_read(void)
{
  return cpucycles_perf_read_fast(&event, rdpmc, 0);
}

static int perfpmc_setup(struct counter_info *info)
{
  return cpucycles_perf_setup(&event, rdpmc, 0, info);
}

static void perfpmc_release(void) { cpucycles_perf_close(&event); }
static void perfpmc_atfork_child(void) { cpucycles_perf_atfork_child(&event); }

const struct counter cpucycles_counter_amd64_perfpmc = {
  "amd64-perfpmc", perfpmc_read, perfpmc_setup, perfpmc_release,
  perfpmc_atfork_child, COUNTER_ASKS
};
