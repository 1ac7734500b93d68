/* sparc64-rdtick: TICK, rd %tick, processor cycles (SPARC V9); bit 63
 * (NPT) is not part of the count (STICK, the constant-rate clock, is not
 * read).  User mode may read it only when NPT is clear, which Linux does
 * at boot (tick_disable_protection); elsewhere the trap is caught. */
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
  return counter_accept(info, COUNTER_ONCORE, 0, 0);
}

const struct counter cpucycles_counter_sparc64_rdtick = {
  "sparc64-rdtick", rdtick_read, rdtick_setup, 0, 0, COUNTER_TRIES
};
