/* ppc32-mftb: the 64-bit time base of a 32-bit PowerPC CPU, read as two
 * halves with mftbu/mftb: off-core, at the rate lib/timebase.c finds, as
 * ppc64-mftb. */
#if !defined(__powerpc__) || defined(__powerpc64__)
#error "ppc32-mftb needs a 32-bit PowerPC CPU"
#endif

#include "counter.h"
#include "timebase.h"

/* One instruction each, its result returned: cppcheck does not see an
 * asm statement's outputs written. */
static inline unsigned int mftbu(void)
{
  unsigned int r;
  __asm__ __volatile__("mftbu %0" : "=r"(r));
  return r;
}

static inline unsigned int mftbl(void)
{
  unsigned int r;
  __asm__ __volatile__("mftb %0" : "=r"(r));
  return r;
}

static long long mftb_read(void)
{
  unsigned int hi, lo;
  /* The upper half may tick between the two reads: read it again. */
  do {
    hi = mftbu();
    lo = mftbl();
  } while (hi != mftbu());
  return (long long) (((unsigned long long) hi << 32) | lo);
}

const struct counter cpucycles_counter_ppc32_mftb = {
  "ppc32-mftb", mftb_read, cpucycles_timebase_setup, 0, 0, COUNTER_ASKS
};
