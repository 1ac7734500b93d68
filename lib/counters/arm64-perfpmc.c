/* arm64-perfpmc: the calling thread's CPU cycles from a Linux perf_event
 * (PERF_COUNT_HW_CPU_CYCLES, user mode only), read without a system call:
 * the PMU counter that the event's self-monitoring page names (index - 1:
 * 0..30 are PMEVCNTR<n>_EL0, 31 is PMCCNTR_EL0, as in Linux's
 * tools/lib/perf/mmap.c), plus the page's offset, under the page's
 * sequence lock (cpucycles_perf_page_read in lib/perf.h).  An on-core cycle
 * counter, per thread, like amd64-perfpmc.
 *
 * Needs Linux 5.17 or later, perf_event_paranoid <= 2 (or CAP_PERFMON),
 * the sysctl kernel.perf_user_access set to 1 (default 0), and an event
 * opened with attr.config1 bit 1 ("rdpmc" in
 * /sys/bus/event_source/devices/armv8_pmuv3_0/format): only then does the
 * kernel set PMUSERENR_EL0 for the thread and report cap_user_rdpmc in the
 * page.  lib/perf.h opens every event with config1 0, so on today's
 * kernels setup sees cap_user_rdpmc 0 and refuses (default-perfevent is
 * then the perf choice); see doc/counters.md. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#if !defined(__aarch64__) || !defined(__linux__)
#error "arm64-perfpmc needs Linux on an ARMv8 CPU in AArch64 state"
#endif

#include <linux/perf_event.h>
#include <sys/syscall.h>

#if !defined(__NR_perf_event_open)
#error "arm64-perfpmc needs the perf_event_open system call"
#endif

#include "counter.h"
#include "perf.h"

#ifndef CPUCYCLES_PERF_AVAILABLE
#error "arm64-perfpmc needs lib/perf.c's perf_event support"
#endif

static __thread struct cpucycles_perf_event event
  __attribute__((tls_model("initial-exec")));

/* The counter registers have their numbers in their names: one case each. */
#define PMEVCNTR(n) \
  case n: __asm__ __volatile__("mrs %0, PMEVCNTR" #n "_EL0" : "=r"(v)); break;

static unsigned long long pmu_counter(unsigned int counter)
{
  unsigned long long v = 0;
  switch (counter) {
    PMEVCNTR(0) PMEVCNTR(1) PMEVCNTR(2) PMEVCNTR(3) PMEVCNTR(4) PMEVCNTR(5)
    PMEVCNTR(6) PMEVCNTR(7) PMEVCNTR(8) PMEVCNTR(9) PMEVCNTR(10)
    PMEVCNTR(11) PMEVCNTR(12) PMEVCNTR(13) PMEVCNTR(14) PMEVCNTR(15)
    PMEVCNTR(16) PMEVCNTR(17) PMEVCNTR(18) PMEVCNTR(19) PMEVCNTR(20)
    PMEVCNTR(21) PMEVCNTR(22) PMEVCNTR(23) PMEVCNTR(24) PMEVCNTR(25)
    PMEVCNTR(26) PMEVCNTR(27) PMEVCNTR(28) PMEVCNTR(29) PMEVCNTR(30)
    case 31: __asm__ __volatile__("mrs %0, PMCCNTR_EL0" : "=r"(v)); break;
  }
  return v;
}

#undef PMEVCNTR

static long long perfpmc_slow(void)
{
  long long count;

  if (event.state == CPUCYCLES_PERF_UNOPENED &&
      cpucycles_perf_open(&event, 1) != 0)
    event.state = CPUCYCLES_PERF_FALLBACK;
  if (event.state == CPUCYCLES_PERF_OPEN) {
    if (cpucycles_perf_page_read(event.page, pmu_counter, &count) == 0) return count;
    if (cpucycles_perf_read_fd(event.fd, &count) == 0) return count;
    cpucycles_perf_close(&event);
    event.state = CPUCYCLES_PERF_FALLBACK;
  }
  return cpucycles_perf_fallback();
}

static long long perfpmc_read(void)
{
  long long count;

  if (__builtin_expect(event.state == CPUCYCLES_PERF_OPEN, 1) &&
      cpucycles_perf_page_read(event.page, pmu_counter, &count) == 0)
    return count;
  return perfpmc_slow();
}

static int perfpmc_setup(struct counter_info *info)
{
  long long count;

  if (cpucycles_perf_open(&event, 1) != 0) return -1;
  /* Without user access every read would be a read(2): that is
   * default-perfevent, not an on-core counter. */
  if (!event.page->cap_user_rdpmc) {
    cpucycles_perf_close(&event);
    return -1;
  }
  /* Try the mrs now: the probe catches SIGILL if the kernel did not
   * open PMUSERENR_EL0 after all. */
  if (cpucycles_perf_page_read(event.page, pmu_counter, &count) != 0 &&
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

const struct counter cpucycles_counter_arm64_perfpmc = {
  "arm64-perfpmc", perfpmc_read, perfpmc_setup, perfpmc_release,
  perfpmc_atfork_child
};
