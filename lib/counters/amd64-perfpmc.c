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

#include "counter.h"
#include "perf.h"

#ifndef CPUCYCLES_PERF_AVAILABLE
#error "amd64-perfpmc needs lib/perf.c's perf_event support"
#endif

static __thread struct cpucycles_perf_event event
  __attribute__((tls_model("initial-exec")));

static inline unsigned long long rdpmc(unsigned int counter)
{
  unsigned int lo, hi;
  __asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
  return (unsigned long long) lo | (unsigned long long) hi << 32;
}

static long long perfpmc_slow(void)
{
  long long count;

  if (event.state == CPUCYCLES_PERF_UNOPENED &&
      cpucycles_perf_open(&event, 1) != 0)
    event.state = CPUCYCLES_PERF_FALLBACK;
  if (event.state == CPUCYCLES_PERF_OPEN) {
    if (cpucycles_perf_page_read(event.page, rdpmc, &count) == 0) return count;
    if (cpucycles_perf_read_fd(event.fd, &count) == 0) return count;
    /* The descriptor stopped answering: from now on this thread reads the
     * clock, so that its values stay in one unit. */
    cpucycles_perf_close(&event);
    event.state = CPUCYCLES_PERF_FALLBACK;
  }
  return cpucycles_perf_fallback();
}

static long long perfpmc_read(void)
{
  long long count;

  if (__builtin_expect(event.state == CPUCYCLES_PERF_OPEN, 1) &&
      cpucycles_perf_page_read(event.page, rdpmc, &count) == 0)
    return count;
  return perfpmc_slow();
}

static int perfpmc_setup(struct counter_info *info)
{
  long long count;

  if (cpucycles_perf_open(&event, 1) != 0) return -1;
  /* Without user rdpmc (rdpmc 0 in sysfs, or a kernel or hypervisor that
   * does not offer it) every read would be a read(2): that is
   * default-perfevent, not an on-core counter. */
  if (!event.page->cap_user_rdpmc) {
    cpucycles_perf_close(&event);
    return -1;
  }
  /* Try the instruction now: the probe catches the fault if the CPU
   * refuses rdpmc after all. */
  if (cpucycles_perf_page_read(event.page, rdpmc, &count) != 0 &&
      cpucycles_perf_read_fd(event.fd, &count) != 0) {
    cpucycles_perf_close(&event);
    return -1;
  }
  info->kind = COUNTER_ONCORE;
  info->frequency = 0;
  info->only32 = 0;
  return 0;
}

static void perfpmc_release(void)
{
  cpucycles_perf_close(&event);
}

static void perfpmc_atfork_child(void)
{
  cpucycles_perf_atfork_child(&event);
}

const struct counter cpucycles_counter_amd64_perfpmc = {
  "amd64-perfpmc", perfpmc_read, perfpmc_setup, perfpmc_release,
  perfpmc_atfork_child
};
