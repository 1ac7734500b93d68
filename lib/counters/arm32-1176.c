/* arm32-1176: CCNT, the 32-bit cycle counter of the ARM1176 (Raspberry Pi
 * 1 and Zero), mrc p15, 0, Rt, c15, c12, 1.  User mode may read it only
 * when the kernel set the V bit of the c15 access validation register:
 * else SIGILL, caught.  Elsewhere the encoding is IMPLEMENTATION DEFINED
 * (SIGILL on Cortex-A; a value that does not move is dropped).  Thumb-1
 * has no coprocessor instructions. */
#if !defined(__arm__) || defined(__aarch64__)
#error "arm32-1176 needs a 32-bit ARM CPU"
#endif
#if defined(__thumb__) && !defined(__thumb2__)
#error "arm32-1176 needs ARM or Thumb-2 code (Thumb-1 has no mrc)"
#endif

#include "counter.h"

static long long arm1176_read(void)
{
  unsigned int r;
  __asm__ __volatile__("mrc p15, 0, %0, c15, c12, 1" : "=r"(r));
  return (long long) r;
}

static int arm1176_setup(struct counter_info *info)
{
  arm1176_read(); /* SIGILL here without user access */
  return counter_accept(info, COUNTER_ONCORE, 0, 1);
}

const struct counter cpucycles_counter_arm32_1176 = {
  "arm32-1176", arm1176_read, arm1176_setup, 0, 0, COUNTER_TRIES
};
