/* amd64-pmcff: RDPMC of fixed-function performance counter 1 (ecx =
 * 1<<30 | 1), which on Intel CPUs counts unhalted core cycles, with no
 * perf event at all: one instruction, the cheapest read there is.
 *
 * It is libcpucycles' counter of that name and works where that one does:
 * when the kernel lets every process execute RDPMC (Linux's sysfs switch
 * /sys/bus/event_source/devices/cpu/rdpmc = 2, which cpucycles-open sets)
 * and someone has the fixed counter counting (the kernel's NMI watchdog,
 * a perf session, or a BIOS).  The count is the core's, not the thread's:
 * it includes other threads and the kernel, and a migration to another
 * core jumps to that core's count, which the caller's medians absorb.
 *
 * Setup asks and never runs RDPMC itself.  The sysfs switch: 2 lets every
 * process run it; 1 (Linux's default) only while some perf event is
 * mapped, which may be true during the probe and false afterwards, a fault
 * in the hot path; 0 never; no core PMU in sysfs at all means no PMU
 * driver, and only that driver ever lets user mode run RDPMC (CR4.PCE):
 * all refused.  Under 2, CPUID leaf 0xA says whether the CPU has fixed
 * counter 1 (AMD processors have no fixed counters, and fault): refused
 * where it does not.  Only where there is nothing to ask (sysfs not
 * mounted) are the reads tried with the fault caught.  A fixed counter
 * that nobody programmed stands still, and the probe drops it for not
 * increasing.
 * amd64-perfpmcff is the same read with a perf event of the thread's own
 * behind it (doc/perf-counters.md). */
#if !defined(__x86_64__) || !defined(__linux__)
#error "amd64-pmcff needs Linux on an x86-64 CPU"
#endif

#include <cpuid.h>
#include <x86intrin.h> /* __rdpmc: the rdpmc instruction, edx:eax */
#include "counter.h"
#include "rdpmc.h"

#define FIXED_CYCLES (1 << 30 | 1)

static long long pmcff_read(void)
{
  return (long long) __rdpmc(FIXED_CYCLES);
}

/* CPUID leaf 0xA (architectural performance monitoring): version 2 or
 * later, and at least two fixed-function counters (EDX bits 4:0). */
static int has_fixed_cycles(void)
{
  unsigned int eax, ebx, ecx, edx;
  if (__get_cpuid_max(0, 0) < 0xa) return 0;
  __cpuid_count(0xa, 0, eax, ebx, ecx, edx);
  return (eax & 0xff) >= 2 && (edx & 0x1f) >= 2;
}

static int pmcff_setup(struct counter_info *info)
{
  info->setting.name = CPUCYCLES_SETTING_RDPMC; /* for cpucycles-info */
  switch (cpucycles_rdpmc_switch_read("", &info->setting)) {
    case 2:
      if (!has_fixed_cycles())
        return counter_refuse(info, CPUCYCLES_REFUSAL_NO_FIXED_COUNTER, 0);
      break;
    case 1:
      return counter_refuse(info, CPUCYCLES_REFUSAL_RDPMC_SWITCH, 0);
    case 0:
      return counter_refuse(info, CPUCYCLES_REFUSAL_NO_PMU, 0);
    default:
      info->may_fault = 1; /* nothing to ask: tried, caught */
      break;
  }
  info->kind = COUNTER_ONCORE;
  info->frequency = 0;
  info->only32 = 0;
  return 0;
}

const struct counter cpucycles_counter_amd64_pmcff = {
  "amd64-pmcff", pmcff_read, pmcff_setup, 0, 0, COUNTER_ASKS
};
