/* x86-tscasm: the time-stamp counter of a 32-bit x86 CPU, read with inline
 * RDTSC (edx:eax) for compilers without the __rdtsc() intrinsic.  Same kind
 * as x86-tsc. */
#if !defined(__i386__)
#error "x86-tscasm needs a 32-bit x86 CPU"
#endif

#include "counter.h"
#include "tscfreq.h"

#ifndef CPUCYCLES_TSCFREQ_AVAILABLE
#error "x86-tscasm needs lib/tscfreq.c"
#endif

static long long tscasm_read(void)
{
  unsigned int lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
  return (long long) (((unsigned long long) hi << 32) | lo);
}

static int tscasm_setup(struct counter_info *info)
{
  /* asks the kernel first whether RDTSC is disabled for the process */
  if (cpucycles_tsc_setup(info) != 0) return -1;
  tscasm_read(); /* faults here on a CPU without RDTSC or when CR4.TSD is set */
  return 0;
}

const struct counter cpucycles_counter_x86_tscasm = {
  "x86-tscasm", tscasm_read, tscasm_setup, 0, 0
};
