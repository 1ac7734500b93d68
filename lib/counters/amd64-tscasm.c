/* amd64-tscasm: amd64-tsc read with inline RDTSC, for compilers without
 * the __rdtsc() intrinsic. */
#if !defined(__x86_64__)
#error "amd64-tscasm needs an x86-64 CPU"
#endif

#include "counter.h"
#include "tscfreq.h"

static long long tscasm_read(void)
{
  unsigned long long lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return (long long) ((hi << 32) | lo);
}

const struct counter cpucycles_counter_amd64_tscasm = {
  "amd64-tscasm", tscasm_read, cpucycles_tsc_setup, 0, 0, COUNTER_ASKS
};
