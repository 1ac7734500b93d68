/* amd64-pmcff: libcpucycles' raw RDPMC of fixed counter 1 (ecx = 1<<30 | 1,
 * unhalted core cycles on Intel), no perf event: the core's count, not the
 * thread's.  Setup asks and never runs RDPMC: the sysfs switch must say 2
 * (1 allows it only while some perf event is mapped, maybe the probe's: a
 * fault later in the hot path) and CPUID must show fixed counter 1 (AMD
 * has none); tried caught only where there is no sysfs to ask.  A fixed
 * counter nobody programmed stands still: dropped.  doc/counters.md. */
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
  return counter_accept(info, COUNTER_ONCORE, 0, 0);
}

const struct counter cpucycles_counter_amd64_pmcff = {
  "amd64-pmcff", pmcff_read, pmcff_setup, 0, 0, COUNTER_ASKS
};
