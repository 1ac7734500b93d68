/* amd64-tsc: the x86-64 time-stamp counter, read with the compiler's
 * __rdtsc() intrinsic.  On current CPUs the TSC ticks at a constant rate
 * (the nominal frequency), not at the core's clock, so it is an off-core
 * counter that the library does not scale. */
#if !defined(__x86_64__)
#error "amd64-tsc needs an x86-64 CPU"
#endif

#include <x86intrin.h>
#include "counter.h"

static long long tsc_read(void)
{
  return (long long) __rdtsc();
}

static int tsc_setup(struct counter_info *info)
{
  tsc_read(); /* faults here when CR4.TSD forbids RDTSC in user mode */
  info->kind = COUNTER_OFFCORE;
  info->frequency = 0;
  info->only32 = 0;
  return 0;
}

const struct counter cpucycles_counter_amd64_tsc = {
  "amd64-tsc", tsc_read, tsc_setup, 0, 0
};
