/* arm64-perfpmc: the calling thread's user-mode cycles from its own perf
 * event, read without a system call: the counter the event's page names
 * (index - 1: 0..30 PMEVCNTR<n>_EL0, 31 PMCCNTR_EL0, as in Linux's
 * tools/lib/perf/mmap.c) plus the page's offset, as amd64-perfpmc.
 * Linux 5.17+ lets EL0 read it only with attr.config1 bit 1 and
 * kernel.perf_user_access 1; bit 0 asks for a 64-bit counter, which an
 * event counter is only with FEAT_PMUv3p5 (Documentation/arch/arm64/
 * perf.rst).  Otherwise the page says cap_user_rdpmc 0 and setup refuses
 * (default-perfevent's case).  doc/perf-counters.md. */
#if !defined(__aarch64__) || !defined(__linux__)
#error "arm64-perfpmc needs Linux on an ARMv8 CPU in AArch64 state"
#endif

#include "perf.h" /* first: config.h, _GNU_SOURCE, <linux/perf_event.h> */

#ifndef CPUCYCLES_PERF_AVAILABLE
#error "arm64-perfpmc needs lib/perf.c's perf_event support"
#endif

#include <sys/syscall.h>
#if !defined(__NR_perf_event_open)
#error "arm64-perfpmc needs the perf_event_open system call"
#endif

#include "counter.h"

/* attr.config1 for the arm_pmuv3 PMU: bit 1 "rdpmc" (user access),
 * bit 0 "long" (a 64-bit counter). */
#define ARM64_USER_ACCESS_64BIT 0x3ULL

/* The counter registers have their numbers in their names: one case each. */
#define PMEVCNTR(n) \
  case n: __asm__ __volatile__("mrs %0, PMEVCNTR" #n "_EL0" : "=r"(v)); break;

static inline unsigned long long pmu_counter(unsigned int counter)
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

/* The probe tries the mrs caught (may_fault): SIGILL if the kernel did not
 * open PMUSERENR_EL0 after all. */
static long long perfpmc_read(void)
{
  return cpucycles_perf_read_fast(&cpucycles_perf_thread_event, pmu_counter,
                                  ARM64_USER_ACCESS_64BIT);
}

static int perfpmc_setup(struct counter_info *info)
{
  return cpucycles_perf_counter_setup(pmu_counter, ARM64_USER_ACCESS_64BIT, info);
}

const struct counter cpucycles_counter_arm64_perfpmc = {
  "arm64-perfpmc", perfpmc_read, perfpmc_setup,
  cpucycles_perf_counter_release, cpucycles_perf_counter_atfork_child,
  COUNTER_ASKS
};
