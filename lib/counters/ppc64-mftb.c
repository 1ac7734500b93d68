/* ppc64-mftb: the 64-bit time base, one mftb: off-core, at the rate
 * lib/timebase.c finds.  Unprivileged on every PowerPC: nothing to catch. */
#if !defined(__powerpc64__)
#error "ppc64-mftb needs a 64-bit PowerPC CPU"
#endif

#include "counter.h"
#include "timebase.h"

static long long mftb_read(void)
{
  long long r;
  __asm__ __volatile__("mftb %0" : "=r"(r));
  return r;
}

const struct counter cpucycles_counter_ppc64_mftb = {
  "ppc64-mftb", mftb_read, cpucycles_timebase_setup, 0, 0, COUNTER_ASKS
};
