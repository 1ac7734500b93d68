/* rdpmc.h: the kernel's switches for user-mode counter reads (x86's sysfs
 * rdpmc, kernel.perf_user_access), so that the raw counters (amd64-pmcff,
 * the rdcycle counters) run only where they cannot fault, now or later in
 * the hot path. */
#ifndef CPUCYCLES_RDPMC_H
#define CPUCYCLES_RDPMC_H

#include "counter.h"

/* The core PMUs' rdpmc files under ROOT/sys/bus/event_source/devices
 * (cpu; cpu_core, cpu_atom): 2 when every one says 2 (always); 1 when one
 * says anything else or is unreadable (1, the default, allows RDPMC only
 * beside a mapped event); 0 without any (no PMU driver, or before Linux
 * 3.4: RDPMC never allowed); -1 without the directory: only trying tells.
 * seen (may be NULL): the switch that decided (the last read), known 0
 * where none was read or it held no digit; seen->name is the caller's. */
int cpucycles_rdpmc_switch_read(const char *root, struct counter_setting *seen);

/* ROOT/proc/sys/kernel/perf_user_access (RISC-V 6.6, arm64 5.17): 0 no
 * user reads, 1 only through a mapped event, 2 (RISC-V legacy) the cycle
 * CSR for all; -1 without it, or anything else. */
int cpucycles_perf_user_access(const char *root);

/* The rdcycle counters' setup: 2 allows (on-core, 64 bits); 0 and 1
 * refuse (1 only beside a mapped event, maybe the probe's, gone later: a
 * fault in the hot path); without the sysctl (before 6.6, qemu-user) only
 * trying tells: allowed, with may_fault, so the reads are caught. */
static inline int cpucycles_rdcycle_setup(struct counter_info *info)
{
  int access = cpucycles_perf_user_access("");
  info->setting.name = CPUCYCLES_SETTING_PERF_USER_ACCESS;
  info->setting.value = access;
  info->setting.known = access >= 0;
  if (access == 0)
    return counter_refuse(info, "kernel.perf_user_access 0: no user-mode cycle reads", 0);
  if (access == 1)
    return counter_refuse(info, "kernel.perf_user_access 1: the cycle CSR only "
                          "beside a perf event", 0);
  info->may_fault = access != 2;
  return counter_accept(info, COUNTER_ONCORE, 0, 0);
}

#endif
