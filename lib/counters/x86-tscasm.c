/* x86-tscasm: x86-tsc read with inline RDTSC (edx:eax), for compilers
 * without the __rdtsc() intrinsic. */
#if !defined(__i386__)
#error "x86-tscasm needs a 32-bit x86 CPU"
#endif

#include "counter.h"
#include "tscfreq.h"

static long long tscasm_read(void)
{
  unsigned int lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
  return (long long) (((unsigned long long) hi << 32) | lo);
}

const struct counter cpucycles_counter_x86_tscasm = {
  "x86-tscasm", tscasm_read, cpucycles_tsc_setup, 0, 0, COUNTER_ASKS
};
