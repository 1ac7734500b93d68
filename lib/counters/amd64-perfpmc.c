/* amd64-perfpmc: the calling thread's user-mode cycles from its own perf
 * event, read without a system call: rdpmc of the counter the event's page
 * names plus the page's offset (cpucycles_perf_page_read, perf-internal.h);
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

static __thread struct cpucycles_perf_event event;

/* x86 needs nothing in attr.config1: user rdpmc is sysfs's switch. */
static inline unsigned long long rdpmc(unsigned int counter)
{
  return (unsigned long long) __rdpmc((int) counter);
}

static long long perfpmc_read(void)
{
  return cpucycles_perf_read_fast(&event, rdpmc, 0);
}

static int perfpmc_setup(struct counter_info *info)
{
  if (cpucycles_perf_can_open(info, 0) != 0) return -1;
  return cpucycles_perf_setup(&event, rdpmc, 0, info);
}

static void perfpmc_release(void) { if (cpucycles_perf_ever_linked()) cpucycles_perf_close(&event); }
static void perfpmc_atfork_child(void) { cpucycles_perf_atfork_child(&event); }

const struct counter cpucycles_counter_amd64_perfpmc = {
  "amd64-perfpmc", perfpmc_read, perfpmc_setup, perfpmc_release,
  perfpmc_atfork_child, COUNTER_ASKS
};
