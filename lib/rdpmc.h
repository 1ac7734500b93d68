/* rdpmc.h: the kernel's switches for counter reads in user mode: whether
 * Linux lets every process execute RDPMC on x86, as its sysfs switch says,
 * and kernel.perf_user_access, so that the raw counters (amd64-pmcff, the
 * rdcycle counters) are tried only where they cannot fault (or fault
 * later, in the hot path).
 *
 * Internal to the library: not exported from the shared library. */
#ifndef CPUCYCLES_RDPMC_H
#define CPUCYCLES_RDPMC_H

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

#endif
