/* s390x-stckf: the TOD clock, STORE CLOCK FAST (z9-109 and later).  Bit 51
 * ticks once a microsecond: 4.096e9 units a second everywhere
 * (z/Architecture Principles of Operation, "TOD Clock"), an exact rate.
 * STCKF, unlike STCK, does not make values unique across CPUs, which a
 * timer needs not. */
#if !defined(__s390x__)
#error "s390x-stckf needs a 64-bit z/Architecture CPU"
#endif

#include "counter.h"

#define TOD_UNITS_PER_SECOND 4096000000LL

static long long stckf_read(void)
{
  unsigned long long t;
  __asm__ __volatile__("stckf %0" : "=Q"(t) : : "cc");
  return (long long) t;
}

static int stckf_setup(struct counter_info *info)
{
  stckf_read(); /* SIGILL here on a machine without store-clock-fast */
  info->frequency_exact = 1;
  return counter_accept(info, COUNTER_OFFCORE, TOD_UNITS_PER_SECOND, 0);
}

const struct counter cpucycles_counter_s390x_stckf = {
  "s390x-stckf", stckf_read, stckf_setup, 0, 0, COUNTER_TRIES
};
