/* arm32-cortex: PMCCNTR, the 32-bit cycle counter of the ARMv7 PMU
 * (Cortex-A), mrc p15, 0, Rt, c9, c13, 0.  User mode may read it only when
 * PMUSERENR.EN is set (stock Linux does not); PMUSERENR itself is
 * readable, so setup asks it, and PMCNTENSET.C, instead of provoking
 * SIGILL.  With PMCR.D set it ticks every 64 cycles, uncorrected
 * (doc/counters.md).  Thumb-1 has no coprocessor instructions. */
#if !defined(__arm__) || defined(__aarch64__)
#error "arm32-cortex needs a 32-bit ARM CPU"
#endif
#if defined(__thumb__) && !defined(__thumb2__)
#error "arm32-cortex needs ARM or Thumb-2 code (Thumb-1 has no mrc)"
#endif

#include "counter.h"

static long long cortex_read(void)
{
  unsigned int r;
  __asm__ __volatile__("mrc p15, 0, %0, c9, c13, 0" : "=r"(r));
  return (long long) r;
}

static unsigned int cortex_userenr(void)
{
  unsigned int r;
  __asm__ __volatile__("mrc p15, 0, %0, c9, c14, 0" : "=r"(r));
  return r;
}

static unsigned int cortex_cntenset(void)
{
  unsigned int r;
  __asm__ __volatile__("mrc p15, 0, %0, c9, c12, 1" : "=r"(r));
  return r;
}

static int cortex_setup(struct counter_info *info)
{
  if (!(cortex_userenr() & 1))
    return counter_refuse(info, "PMUSERENR.EN is 0: no user access", 0);
  if (!(cortex_cntenset() & 0x80000000u))
    return counter_refuse(info, "PMCNTENSET.C is 0: the cycle counter is off", 0);
  cortex_read();
  return counter_accept(info, COUNTER_ONCORE, 0, 1);
}

const struct counter cpucycles_counter_arm32_cortex = {
  "arm32-cortex", cortex_read, cortex_setup, 0, 0, COUNTER_TRIES
};
