/* loong64-rdtime: the stable counter, rdtime.d, off-core, at the rate
 * cpucfg gives as Linux's calc_const_freq() reads it: word 2 bit 14
 * (LLFTP) says the timer exists, word 4 is its base frequency in Hz, word
 * 5 a multiplier (bits 15:0) and divisor (31:16).  Believed between 1 MHz
 * and 10 GHz; a zero word leaves the rate to the probe's measured
 * multiplier.  Both unprivileged.  Built with clang (doc/counters.md). */
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
  info->rate_unknown = f == 0;
  return counter_accept(info, COUNTER_OFFCORE, (long long) f, 0);
}

const struct counter cpucycles_counter_loong64_rdtime = {
  "loong64-rdtime", rdtime_read, rdtime_setup, 0, 0, COUNTER_ASKS
};
