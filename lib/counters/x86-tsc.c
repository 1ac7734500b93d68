/* x86-tsc: the time-stamp counter of a 32-bit x86 CPU, read with
 * __rdtsc(); as amd64-tsc (before the invariant TSC, Pentium to Core 2
 * era, it did count core cycles). */
#if !defined(__i386__)
#error "x86-tsc needs a 32-bit x86 CPU"
#endif

#include <x86intrin.h>
#include "counter.h"
#include "tscfreq.h"

static long long tsc_read(void)
{
  return (long long) __rdtsc();
}

const struct counter cpucycles_counter_x86_tsc = {
  "x86-tsc", tsc_read, cpucycles_tsc_setup, 0, 0, COUNTER_ASKS
};
