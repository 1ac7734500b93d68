/* sparc64-rdtick: the TICK register of a SPARC V9 CPU, read with
 * rd %tick.  SPARC V9 defines its 63-bit counter field as counting
 * processor clock cycles, so it is an on-core cycle counter (the separate
 * STICK register, not read here, is the constant-rate system clock of
 * UltraSPARC III and later).  Bit 63 (NPT) is not part of the count.
 *
 * User mode may read TICK only when NPT is clear; Linux clears it at boot
 * (tick_disable_protection), other kernels may not: then rd traps and the
 * probe catches the signal.  On CPUs that change their clock, TICK changes
 * with it, which is what a cycle counter should do. */
#if !defined(__sparc__) || !defined(__arch64__)
#error "sparc64-rdtick needs a 64-bit SPARC V9 CPU"
#endif

#include "counter.h"

static long long rdtick_read(void)
{
  unsigned long long t;
  __asm__ __volatile__("rd %%tick, %0" : "=r"(t));
  return (long long) (t & 0x7fffffffffffffffULL);
}

static int rdtick_setup(struct counter_info *info)
{
  rdtick_read(); /* traps here when TICK.NPT is set */
  info->kind = COUNTER_ONCORE;
  info->frequency = 0;
  info->only32 = 0;
  return 0;
}

const struct counter cpucycles_counter_sparc64_rdtick = {
  "sparc64-rdtick", rdtick_read, rdtick_setup, 0, 0, COUNTER_TRIES
};
