/* riscv32-perfrdcycle: riscv64-perfrdcycle on RV32, where each 64-bit
 * counter is two CSRs, the low half at 0xc00 + n and the high at 0xc80 + n
 * (RISC-V unprivileged specification, "Zicntr"): read high, low, high
 * until the highs agree, so that a carry between them is never seen half
 * done. */
#if !defined(__riscv) || __riscv_xlen != 32 || !defined(__linux__)
#error "riscv32-perfrdcycle needs Linux on a 32-bit RISC-V CPU"
#endif

#include "perf.h" /* first: config.h, _GNU_SOURCE, <linux/perf_event.h> */

#ifndef CPUCYCLES_PERF_AVAILABLE
#error "riscv32-perfrdcycle needs lib/perf.c's perf_event support"
#endif

#include <sys/syscall.h>
#if !defined(__NR_perf_event_open)
#error "riscv32-perfrdcycle needs the perf_event_open system call"
#endif

#include "counter.h"

/* A CSR number is part of the instruction: one case per counter. */
#define HPMCOUNTER(n)                                                      \
  case n:                                                                  \
    do {                                                                   \
      __asm__ __volatile__("csrr %0, " #n " + 0xc80" : "=r"(high));        \
      __asm__ __volatile__("csrr %0, " #n " + 0xc00" : "=r"(low));         \
      __asm__ __volatile__("csrr %0, " #n " + 0xc80" : "=r"(again));       \
    } while (high != again);                                               \
    break;

static inline unsigned long long pmu_counter(unsigned int counter)
{
  unsigned long high = 0, low = 0, again = 0;
  switch (counter) {
    HPMCOUNTER(0) HPMCOUNTER(1) HPMCOUNTER(2) HPMCOUNTER(3) HPMCOUNTER(4)
    HPMCOUNTER(5) HPMCOUNTER(6) HPMCOUNTER(7) HPMCOUNTER(8) HPMCOUNTER(9)
    HPMCOUNTER(10) HPMCOUNTER(11) HPMCOUNTER(12) HPMCOUNTER(13)
    HPMCOUNTER(14) HPMCOUNTER(15) HPMCOUNTER(16) HPMCOUNTER(17)
    HPMCOUNTER(18) HPMCOUNTER(19) HPMCOUNTER(20) HPMCOUNTER(21)
    HPMCOUNTER(22) HPMCOUNTER(23) HPMCOUNTER(24) HPMCOUNTER(25)
    HPMCOUNTER(26) HPMCOUNTER(27) HPMCOUNTER(28) HPMCOUNTER(29)
    HPMCOUNTER(30) HPMCOUNTER(31)
  }
  return (unsigned long long) high << 32 | low;
}

#undef HPMCOUNTER

static long long perfrdcycle_read(void)
{
  return cpucycles_perf_read_fast(&cpucycles_perf_thread_event, pmu_counter, 0);
}

static int perfrdcycle_setup(struct counter_info *info)
{
  return cpucycles_perf_counter_setup(pmu_counter, 0, info);
}

const struct counter cpucycles_counter_riscv32_perfrdcycle = {
  "riscv32-perfrdcycle", perfrdcycle_read, perfrdcycle_setup,
  cpucycles_perf_counter_release, cpucycles_perf_counter_atfork_child,
  COUNTER_ASKS
};
