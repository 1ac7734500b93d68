/* ppc32-mftb: the 64-bit time base of a 32-bit PowerPC CPU, read as two
 * halves with mftbu/mftb (the upper half read again until it holds still).
 * The time base ticks at a constant rate beside the core (512 MHz on
 * POWER8 and later, tens of MHz on older and embedded parts), so it is an
 * off-core counter, scaled by the CPU frequency estimate over the
 * time-base frequency.
 *
 * The time-base frequency is the OS's to tell, the same for ppc32 and
 * ppc64: cpucycles_timebase_frequency() in lib/timebase.c asks glibc's
 * __ppc_get_timebase_freq() (the vDSO's __kernel_get_tbfreq, or the
 * "timebase" line of /proc/cpuinfo) or, without glibc, reads that line
 * itself; the value is believed only between 1 MHz and 10 GHz.  Where the
 * OS states none (qemu-user shows the host's /proc/cpuinfo), the probe
 * measures the multiplier, as libcpucycles does.  mftb is
 * unprivileged on every PowerPC. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#if !defined(__powerpc__) || defined(__powerpc64__)
#error "ppc32-mftb needs a 32-bit PowerPC CPU"
#endif

#include "counter.h"
#include "timebase.h"

#ifndef CPUCYCLES_TIMEBASE_AVAILABLE
#error "the mftb counters need lib/timebase.c's time-base frequency"
#endif

/* One instruction each, its result returned: an analyser that does not see
 * an asm statement's outputs written (cppcheck) sees no variable read
 * before it is set. */
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

/* Off-core, scaled by the OS's time-base frequency (measured by the probe
 * where the OS states none).  mftb is unprivileged and cannot fault: the
 * probe reads it with nothing caught. */
static int mftb_setup(struct counter_info *info)
{
  if (cpucycles_timebase_info(info) != 0)
    return counter_refuse(info, "the OS states an implausible time-base frequency", 0);
  return 0;
}

const struct counter cpucycles_counter_ppc32_mftb = {
  "ppc32-mftb", mftb_read, mftb_setup, 0, 0, COUNTER_ASKS
};
