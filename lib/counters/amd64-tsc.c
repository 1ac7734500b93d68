/* amd64-tsc: the x86-64 time-stamp counter, read with __rdtsc().  On
 * current CPUs it ticks at the nominal rate, not the core's: off-core,
 * scaled where CPUID states the rate (Intel since Skylake), as
 * libcpucycles does, else unscaled (lib/tscfreq.c, doc/counters.md). */
#if !defined(__x86_64__)
#error "amd64-tsc needs an x86-64 CPU"
#endif

#include <x86intrin.h>
#include "counter.h"
#include "tscfreq.h"

static long long tsc_read(void)
{
  return (long long) __rdtsc();
}

const struct counter cpucycles_counter_amd64_tsc = {
  "amd64-tsc", tsc_read, cpucycles_tsc_setup, 0, 0, COUNTER_ASKS
};
