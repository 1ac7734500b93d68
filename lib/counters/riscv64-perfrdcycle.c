/* riscv64-perfrdcycle: the calling thread's user-mode cycles from its own
 * perf event, read without a system call.  libcpucycles' name (an event
 * held open so that the kernel lets the thread read the cycle CSR), but
 * rather than the core's free-running rdcycle, this reads what the page
 * says, as amd64-perfpmc: the thread's own count across migrations.  The
 * SBI PMU driver puts (CSR number - 0xc00) + 1 in the page's index
 * (riscv_pmu_event_idx), read as CSR 0xc00 + index - 1, as in Linux's
 * tools/lib/perf/mmap.c.  Linux 6.6+ opens scounteren for it under
 * kernel.perf_user_access 1 (the default) or 2; nothing in attr.config1.
 * Under 0 the page says no and setup refuses.  doc/perf-counters.md. */
#if !defined(__riscv) || __riscv_xlen != 64 || !defined(__linux__)
#error "riscv64-perfrdcycle needs Linux on a 64-bit RISC-V CPU"
#endif

#include "perf.h" /* first: config.h, _GNU_SOURCE, <linux/perf_event.h> */

#ifndef CPUCYCLES_PERF_AVAILABLE
#error "riscv64-perfrdcycle needs lib/perf.c's perf_event support"
#endif

#include <sys/syscall.h>
#if !defined(__NR_perf_event_open)
#error "riscv64-perfrdcycle needs the perf_event_open system call"
#endif

#include "counter.h"

/* A CSR number is part of the instruction: one case per counter CSR. */
#define HPMCOUNTER(n) \
  case n: __asm__ __volatile__("csrr %0, " #n " + 0xc00" : "=r"(v)); break;

static inline unsigned long long pmu_counter(unsigned int counter)
{
  unsigned long long v = 0;
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
  return v;
}

#undef HPMCOUNTER

/* The probe tries the csrr caught (may_fault): SIGILL if the kernel did
 * not open scounteren after all. */
static long long perfrdcycle_read(void)
{
  return cpucycles_perf_read_fast(&cpucycles_perf_thread_event, pmu_counter, 0);
}

static int perfrdcycle_setup(struct counter_info *info)
{
  return cpucycles_perf_counter_setup(pmu_counter, 0, info);
}

const struct counter cpucycles_counter_riscv64_perfrdcycle = {
  "riscv64-perfrdcycle", perfrdcycle_read, perfrdcycle_setup,
  cpucycles_perf_counter_release, cpucycles_perf_counter_atfork_child,
  COUNTER_ASKS
};
