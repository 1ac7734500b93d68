/* riscv64-perfrdcycle: the calling thread's CPU cycles from a Linux perf_event
 * (PERF_COUNT_HW_CPU_CYCLES, user mode only), read without a system call.
 * The name is libcpucycles': a cycles event held open so that the kernel
 * lets the thread read the cycle CSR.  Where libcpucycles then executes
 * rdcycle itself (the core's free-running count, every process's cycles),
 * this counter reads what the event's page says, so that the count is the
 * thread's own and survives migration and context switches:
 * the counter CSR that the event's self-monitoring page names, plus the
 * page's offset, under the page's sequence lock (cpucycles_perf_page_read
 * in lib/perf.h).  The SBI PMU driver puts (CSR number - 0xc00) + 1 in the
 * page's index (riscv_pmu_event_idx: csr_index + 1), so index - 1 is the
 * counter number n, read as CSR 0xc00 + n: cycle, time, instret,
 * hpmcounter3..31, as in Linux's tools/lib/perf/mmap.c.  An on-core cycle
 * counter, per thread, like amd64-perfpmc.
 *
 * This is how Linux 6.6 and later let user space read cycles
 * (Documentation/admin-guide/sysctl/kernel.rst, perf_user_access): with
 * the sysctl kernel.perf_user_access at its default 1, the kernel opens
 * scounteren for a counter only while the process has its event mapped,
 * and reports cap_user_rdpmc in the page; at 2 ("legacy") it does the same
 * for cycles and instret events (and leaves cycle readable by anyone).
 * Nothing is asked in attr.config1 (unlike arm64): the sysctl, read when
 * the event is opened, decides.  Needs an SBI PMU (riscv_pmu_sbi) and
 * perf_event_paranoid <= 2 (or CAP_PERFMON).  Under perf_user_access 0 the
 * page says no and setup refuses. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#if !defined(__riscv) || __riscv_xlen != 64 || !defined(__linux__)
#error "riscv64-perfrdcycle needs Linux on a 64-bit RISC-V CPU"
#endif

#include <linux/perf_event.h>
#include <sys/syscall.h>

#if !defined(__NR_perf_event_open)
#error "riscv64-perfrdcycle needs the perf_event_open system call"
#endif

#include "counter.h"
#include "perf.h"

#ifndef CPUCYCLES_PERF_AVAILABLE
#error "riscv64-perfrdcycle needs lib/perf.c's perf_event support"
#endif

static __thread struct cpucycles_perf_event event;

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

/* The thread's event, in the shared helpers of lib/perf.c: the page read
 * with the csrr on the hot path (inline), read(2) when the page says no
 * (index 0), the clock for a thread the kernel refuses an event.  The
 * probe tries the csrr caught (setup says may_fault): SIGILL if the
 * kernel did not open scounteren after all. */
static long long perfrdcycle_read(void)
{
  return cpucycles_perf_read_fast(&event, pmu_counter, 0);
}

static int perfrdcycle_setup(struct counter_info *info)
{
  return cpucycles_perf_setup(&event, pmu_counter, 0, info);
}

static void perfrdcycle_release(void) { cpucycles_perf_close(&event); }
static void perfrdcycle_atfork_child(void) { cpucycles_perf_atfork_child(&event); }

const struct counter cpucycles_counter_riscv64_perfrdcycle = {
  "riscv64-perfrdcycle", perfrdcycle_read, perfrdcycle_setup, perfrdcycle_release,
  perfrdcycle_atfork_child, COUNTER_ASKS
};
