/* loong64-rdtime: the stable counter of a LoongArch64 CPU, read with
 * rdtime.d.  It ticks at a constant frequency beside the core: off-core,
 * scaled by the CPU frequency estimate over that frequency.
 *
 * The frequency comes from cpucfg (unprivileged), as Linux's
 * calc_const_freq() computes it: word 2 bit 14 (LLFTP) says the constant
 * timer exists, word 4 is its base frequency in Hz, word 5 holds a
 * multiplier (bits 15:0) and divisor (bits 31:16); frequency =
 * base * mul / div, believed only between 1 MHz and 10 GHz.  Where CPUCFG
 * gives none (a zero word), the rate is unknown and the probe measures
 * the multiplier, as libcpucycles does for every timer.
 *
 * Written from the LoongArch reference manual and Linux's
 * arch/loongarch/kernel/time.c.  Debian 12 has no LoongArch gcc or C
 * library: tests/check-cross.sh compiles this file alone with clang 19 and
 * runs it under qemu-loongarch64 (doc/counters.md); not run on hardware. */
#if !defined(__loongarch__) || !defined(__loongarch64)
#error "loong64-rdtime needs a 64-bit LoongArch CPU"
#endif

#include "counter.h"

#define RDTIME_MIN_HZ 1000000ULL
#define RDTIME_MAX_HZ 10000000000ULL

static long long rdtime_read(void)
{
  long long t;
  __asm__ __volatile__("rdtime.d %0, $zero" : "=r"(t));
  return t;
}

static unsigned int cpucfg(unsigned int word)
{
  unsigned int r;
  __asm__ __volatile__("cpucfg %0, %1" : "=r"(r) : "r"(word));
  return r;
}

static int rdtime_setup(struct counter_info *info)
{
  unsigned long long base, mul, div, f;
  if (!(cpucfg(2) & (1u << 14))) /* no constant timer */
    return counter_refuse(info, "CPUCFG says the timer is not constant", 0);
  base = cpucfg(4);
  mul = cpucfg(5) & 0xffff;
  div = cpucfg(5) >> 16;
  f = base == 0 || mul == 0 || div == 0 ? 0 : base * mul / div;
  if (f != 0 && (f < RDTIME_MIN_HZ || f > RDTIME_MAX_HZ))
    return counter_refuse(info, "CPUCFG gives an implausible timer frequency", 0);
  /* rdtime.d and cpucfg are unprivileged: nothing to catch */
  info->kind = COUNTER_OFFCORE;
  info->frequency = (long long) f;
  info->rate_unknown = f == 0;
  info->only32 = 0;
  return 0;
}

const struct counter cpucycles_counter_loong64_rdtime = {
  "loong64-rdtime", rdtime_read, rdtime_setup, 0, 0, COUNTER_ASKS
};
