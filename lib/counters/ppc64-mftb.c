/* ppc64-mftb: the 64-bit time base of a 64-bit PowerPC CPU, read with
 * one mftb.  The time base ticks at a constant
 * rate beside the core (512 MHz on POWER8 and later, tens of MHz on older
 * and embedded parts), so it is an off-core counter, scaled by the CPU
 * frequency estimate over the time-base frequency.
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
#if !defined(__powerpc64__)
#error "ppc64-mftb needs a 64-bit PowerPC CPU"
#endif

#include "counter.h"
#include "timebase.h"

#ifndef CPUCYCLES_TIMEBASE_AVAILABLE
#error "the mftb counters need lib/timebase.c's time-base frequency"
#endif

static long long mftb_read(void)
{
  long long r;
  __asm__ __volatile__("mftb %0" : "=r"(r));
  return r;
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

const struct counter cpucycles_counter_ppc64_mftb = {
  "ppc64-mftb", mftb_read, mftb_setup, 0, 0, COUNTER_ASKS
};
