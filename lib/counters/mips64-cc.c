/* mips64-cc: the CP0 Count register of a MIPS64 Release 2 (or later) CPU,
 * read in user mode with rdhwr $2 (hardware register CC).  An on-core
 * counter of 32 bits, extended to 64 by the library.
 *
 * Count does not necessarily tick every cycle: it ticks once every CCRes
 * cycles (hardware register 3), and CCRes is 2 on most cores.  So setup
 * reads CCRes and each read multiplies by it, modulo 2^32: since
 * (count + k*2^32) * CCRes = count * CCRes (mod 2^32), the result is the
 * low 32 bits of the cycle count, in steps of CCRes, and the 32-to-64-bit
 * wrapper extends it as it extends any 32-bit cycle counter.  A CCRes
 * outside 1..64 is not believed.
 *
 * rdhwr $2 and $3 are allowed in user mode when the kernel sets HWREna.CC
 * and HWREna.CCRes, which Linux does on Release 2 CPUs; elsewhere rdhwr
 * raises a reserved-instruction exception (SIGILL, caught by the probe). */
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
  info->kind = COUNTER_ONCORE;
  info->frequency = 0;
  info->only32 = 1;
  return 0;
}

const struct counter cpucycles_counter_mips64_cc = {
  "mips64-cc", cc_read, cc_setup, 0, 0, COUNTER_TRIES
};
