/* x86-tsc: the time-stamp counter of a 32-bit x86 CPU, read with the
 * compiler's __rdtsc() intrinsic.  As for amd64-tsc: on current CPUs the
 * TSC ticks at a constant (nominal) rate, not at the core's clock: an
 * off-core counter, scaled where CPUID states its rate and unscaled
 * otherwise.  (On CPUs before the invariant TSC, Pentium to Core 2 era, it
 * did count core cycles.) */
#if !defined(__i386__)
#error "x86-tsc needs a 32-bit x86 CPU"
#endif

#include <x86intrin.h>
#include "counter.h"
#include "tscfreq.h"

#ifndef CPUCYCLES_TSCFREQ_AVAILABLE
#error "x86-tsc needs lib/tscfreq.c"
#endif

static long long tsc_read(void)
{
  return (long long) __rdtsc();
}

static int tsc_setup(struct counter_info *info)
{
  /* asks the kernel first whether RDTSC is disabled for the process */
  if (cpucycles_tsc_setup(info) != 0) return -1;
  tsc_read(); /* faults here on a CPU without RDTSC or when CR4.TSD is set */
  return 0;
}

const struct counter cpucycles_counter_x86_tsc = {
  "x86-tsc", tsc_read, tsc_setup, 0, 0
};
