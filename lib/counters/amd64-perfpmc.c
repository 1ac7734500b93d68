/* amd64-perfpmc: the calling thread's user-mode cycles from its own perf
 * event, read without a system call: rdpmc of the counter the event's page
 * names plus the page's offset (cpucycles_perf_page_read, perf-event.h);
 * read(2) while the page says index 0 (multiplexed out).  Needs and
 * threads: doc/perf-counters.md. */
#if !defined(__x86_64__) || !defined(__linux__)
#error "amd64-perfpmc needs Linux on an x86-64 CPU"
#endif

#include "perf.h" /* first: config.h, _GNU_SOURCE, <linux/perf_event.h> */

#ifndef CPUCYCLES_PERF_AVAILABLE
#error "amd64-perfpmc needs lib/perf.c's perf_event support"
#endif

#include <sys/syscall.h>
#if !defined(__NR_perf_event_open)
#error "amd64-perfpmc needs the perf_event_open system call"
#endif

#include <x86intrin.h> /* __rdpmc: the rdpmc instruction, edx:eax */
#include "counter.h"

/* x86 needs nothing in attr.config1: user rdpmc is sysfs's switch. */
static inline unsigned long long rdpmc(unsigned int counter)
{
  return (unsigned long long) __rdpmc((int) counter);
}

static long long perfpmc_read(void)
{
  return cpucycles_perf_read_fast(&cpucycles_perf_thread_event, rdpmc, 0);
}

static int perfpmc_setup(struct counter_info *info)
{
  return cpucycles_perf_counter_setup(rdpmc, 0, info);
}

const struct counter cpucycles_counter_amd64_perfpmc = {
  "amd64-perfpmc", perfpmc_read, perfpmc_setup,
  cpucycles_perf_counter_release, cpucycles_perf_counter_atfork_child,
  COUNTER_ASKS
};
