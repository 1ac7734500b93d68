/* amd64-tsc: the x86-64 time-stamp counter, read with the compiler's
 * __rdtsc() intrinsic.  On current CPUs the TSC ticks at a constant rate
 * (the nominal frequency), not at the core's clock: an off-core counter.
 * Where CPUID states that rate (invariant TSC and leaf 0x15: Intel since
 * Skylake), the probe scales the TSC by the CPU frequency estimate over it,
 * as libcpucycles does, so that cpucycles() estimates core cycles; on
 * other CPUs (AMD's among them) it is used unscaled, in TSC ticks
 * (lib/tscfreq.c, doc/counters.md). */
#if !defined(__x86_64__)
#error "amd64-tsc needs an x86-64 CPU"
#endif

#include <x86intrin.h>
#include "counter.h"
#include "tscfreq.h"

#ifndef CPUCYCLES_TSCFREQ_AVAILABLE
#error "amd64-tsc needs lib/tscfreq.c"
#endif

static long long tsc_read(void)
{
  return (long long) __rdtsc();
}

static int tsc_setup(struct counter_info *info)
{
  /* Asks the kernel whether RDTSC is allowed (PR_GET_TSC) and runs no
   * RDTSC: the probe's reads do, caught only where the kernel could not
   * answer (info->may_fault). */
  return cpucycles_tsc_setup(info);
}

const struct counter cpucycles_counter_amd64_tsc = {
  "amd64-tsc", tsc_read, tsc_setup, 0, 0, COUNTER_ASKS
};
