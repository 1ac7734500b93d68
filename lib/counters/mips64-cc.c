/* mips64-cc: the CP0 Count register of a MIPS64 Release 2 CPU, rdhwr $2,
 * 32 bits, on-core.  Count ticks once every CCRes cycles (rdhwr $3; 2 on
 * most cores): (count + k*2^32) * CCRes modulo 2^32 is the low 32 bits of
 * the cycle count, which the library extends.  A CCRes outside 1..64 is
 * not believed.  Linux sets HWREna.CC and .CCRes on Release 2; elsewhere
 * rdhwr raises SIGILL, caught by the probe. */
#if !defined(__mips__) || !defined(__mips64)
#error "mips64-cc needs a 64-bit MIPS CPU"
#endif

#include "counter.h"

static unsigned int cycles_per_count = 1;

static unsigned int rdhwr_cc(void)
{
  unsigned long r;
  __asm__ __volatile__(".set push\n\t.set mips64r2\n\trdhwr %0, $2\n\t.set pop"
                       : "=r"(r));
  return (unsigned int) r;
}

static unsigned int rdhwr_ccres(void)
{
  unsigned long r;
  __asm__ __volatile__(".set push\n\t.set mips64r2\n\trdhwr %0, $3\n\t.set pop"
                       : "=r"(r));
  return (unsigned int) r;
}

static long long cc_read(void)
{
  return (long long) (unsigned int) (rdhwr_cc() * cycles_per_count);
}

static int cc_setup(struct counter_info *info)
{
  unsigned int res = rdhwr_ccres(); /* SIGILL here without HWREna */
  if (res < 1 || res > 64)
    return counter_refuse(info, "CCRes is implausible", 0);
  cycles_per_count = res;
  rdhwr_cc();
  return counter_accept(info, COUNTER_ONCORE, 0, 1);
}

const struct counter cpucycles_counter_mips64_cc = {
  "mips64-cc", cc_read, cc_setup, 0, 0, COUNTER_TRIES
};
