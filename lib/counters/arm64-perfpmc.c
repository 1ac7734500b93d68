/* arm64-perfpmc: the calling thread's CPU cycles from a Linux perf_event
 * (PERF_COUNT_HW_CPU_CYCLES, user mode only), read without a system call:
 * the PMU counter that the event's self-monitoring page names (index - 1:
 * 0..30 are PMEVCNTR<n>_EL0, 31 is PMCCNTR_EL0, as in Linux's
 * tools/lib/perf/mmap.c), plus the page's offset, under the page's
 * sequence lock (cpucycles_perf_page_read in lib/perf.h).  An on-core cycle
 * counter, per thread, like amd64-perfpmc.
 *
 * Linux (5.17 and later; Documentation/arch/arm64/perf.rst, "Perf
 * Userspace PMU Hardware Counter Access") lets EL0 read a counter only for
 * a thread-bound event opened with attr.config1 bit 1 ("rdpmc" in
 * /sys/bus/event_source/devices/armv8_pmuv3_0/format), and only while the
 * sysctl kernel.perf_user_access is 1 (default 0).  Then, while such an
 * event is in the thread's context, the kernel sets PMUSERENR_EL0 and the
 * page reports cap_user_rdpmc and the counter's index.  config1 bit 0
 * ("long") asks for a 64-bit counter: the cycle counter PMCCNTR_EL0 is
 * one; an event counter is one only with FEAT_PMUv3p5, and without it the
 * kernel fails to schedule the event when the cycle counter is taken (the
 * page then says index 0 and the read is a read(2)).  So this counter
 * opens with config1 = 3: user access, 64 bits (pmc_width 64).  Also needs
 * perf_event_paranoid <= 2 (or CAP_PERFMON).  With perf_user_access 0 the
 * open still succeeds but the page says cap_user_rdpmc 0 and setup
 * refuses; default-perfevent then reads the same event with read(2).
 * Kernels before 5.17 ignore bit 1 and never allow EL0 reads: refused the
 * same way. */
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

/* attr.config1 for the arm_pmuv3 PMU: bit 1 "rdpmc" (user access),
 * bit 0 "long" (a 64-bit counter). */
#define ARM64_USER_ACCESS_64BIT 0x3ULL

static __thread struct cpucycles_perf_event event;

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

/* The thread's event, in the shared helpers of lib/perf.c: the page read
 * with the mrs on the hot path (inline), read(2) when the page says no
 * (index 0), the clock for a thread the kernel refuses an event.  The
 * probe tries the mrs caught (setup says may_fault): SIGILL if the kernel
 * did not open PMUSERENR_EL0 after all. */
static long long perfpmc_read(void)
{
  return cpucycles_perf_read_fast(&event, pmu_counter, ARM64_USER_ACCESS_64BIT);
}

static int perfpmc_setup(struct counter_info *info)
{
  return cpucycles_perf_setup(&event, pmu_counter, ARM64_USER_ACCESS_64BIT,
                              info);
}

static void perfpmc_release(void) { cpucycles_perf_close(&event); }
static void perfpmc_atfork_child(void) { cpucycles_perf_atfork_child(&event); }

const struct counter cpucycles_counter_arm64_perfpmc = {
  "arm64-perfpmc", perfpmc_read, perfpmc_setup, perfpmc_release,
  perfpmc_atfork_child, COUNTER_ASKS
};
