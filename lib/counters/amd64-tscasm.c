/* amd64-tscasm: the x86-64 time-stamp counter, read with inline RDTSC for
 * compilers without the __rdtsc() intrinsic.  Same kind as amd64-tsc. */
#if !defined(__x86_64__)
#error "amd64-tscasm needs an x86-64 CPU"
#endif

#include "counter.h"
#include "tscfreq.h"

#ifndef CPUCYCLES_TSCFREQ_AVAILABLE
#error "amd64-tscasm needs lib/tscfreq.c"
#endif

static long long tscasm_read(void)
{
  unsigned long long lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return (long long) ((hi << 32) | lo);
}

static int tscasm_setup(struct counter_info *info)
{
  /* Asks the kernel whether RDTSC is allowed (PR_GET_TSC) and runs no
   * RDTSC: the probe's reads do, caught only where the kernel could not
   * answer (info->may_fault). */
  return cpucycles_tsc_setup(info);
}

const struct counter cpucycles_counter_amd64_tscasm = {
  "amd64-tscasm", tscasm_read, tscasm_setup, 0, 0, COUNTER_ASKS
};
