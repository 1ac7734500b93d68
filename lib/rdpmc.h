/* rdpmc.h: the kernel's switches for counter reads in user mode: whether
 * Linux lets every process execute RDPMC on x86, as its sysfs switch says,
 * and kernel.perf_user_access, so that the raw counters (amd64-pmcff, the
 * rdcycle counters) are tried only where they cannot fault (or fault
 * later, in the hot path).
 *
 * Internal to the library: not exported from the shared library. */
#ifndef CPUCYCLES_RDPMC_H
#define CPUCYCLES_RDPMC_H

#include "counter.h"

/* The core PMUs' rdpmc files under ROOT/sys/bus/event_source/devices
 * (cpu; cpu_core and cpu_atom on hybrid Intel processors): 2 when every
 * one present says 2 (always); 1 when one says anything else (0 never, 1
 * Linux's default: only while the process has a perf event mapped;
 * unreadable or malformed included); 0 when the directory holds no core
 * PMU with the switch (no PMU driver: Linux then never lets user mode run
 * RDPMC, as only the PMU driver sets CR4.PCE; a kernel before 3.4, which
 * had no switch, never let it either); -1 when there is nothing to ask
 * (no such directory: sysfs not mounted, not Linux): then only trying
 * tells. */
int cpucycles_rdpmc_switch(const char *root);

/* ROOT/proc/sys/kernel/perf_user_access (Linux 6.6 on RISC-V, 5.17 on
 * arm64): 0 no user-mode counter reads, 1 only through a mapped perf
 * event, 2 (RISC-V's legacy mode) the cycle CSR for every process.  The
 * value, or -1 when there is no such file or it says something else. */
int cpucycles_perf_user_access(const char *root);

/* The rdcycle counters' setup question (riscv32-rdcycle, riscv64-rdcycle),
 * asked of kernel.perf_user_access: 2 lets every process read the cycle
 * CSR; 0 and 1 do not (1 only beside a mapped perf event, which may be the
 * probe's and gone afterwards: a fault in the hot path), a refusal (-1)
 * with the value as its reason.  Without the sysctl (a kernel before 6.6,
 * qemu-user) only trying tells: 0, with info->may_fault set, so that the
 * reads are caught. */
static inline int cpucycles_rdcycle_access(struct counter_info *info)
{
  int access = cpucycles_perf_user_access("");
  if (access == 0)
    return counter_refuse(info, "kernel.perf_user_access 0: no user-mode cycle reads", 0);
  if (access == 1)
    return counter_refuse(info, "kernel.perf_user_access 1: the cycle CSR only "
                          "beside a perf event", 0);
  info->may_fault = access != 2;
  return 0;
}

#endif
