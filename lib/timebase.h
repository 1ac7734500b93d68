/* timebase.h: the frequency of the PowerPC time base, which ppc32-mftb and
 * ppc64-mftb read (two ways of reading one register, one way of knowing
 * its rate).  Declares nothing on other hosts.  Internal to the library. */
#ifndef CPUCYCLES_TIMEBASE_H
#define CPUCYCLES_TIMEBASE_H

#if defined(__powerpc__)
#define CPUCYCLES_TIMEBASE_AVAILABLE 1

/* Plausible rates: 512 MHz on POWER8 and later, tens of MHz on older and
 * embedded parts. */
#define CPUCYCLES_TIMEBASE_MIN_HZ 1000000LL
#define CPUCYCLES_TIMEBASE_MAX_HZ 10000000000LL

struct counter_info;

/* A time-base counter's setup: off-core, 64 bits, scaled by persecond over
 * the time base's rate as the OS states it (glibc's
 * __ppc_get_timebase_freq(): the vDSO, or /proc/cpuinfo's "timebase" line;
 * else that line read here), or of unknown rate (rate_unknown: the probe
 * measures the multiplier, as libcpucycles does) where it states none
 * (qemu-user shows the host's /proc/cpuinfo).  Returns 0, or -1 (info
 * untouched) for an implausible rate. */
int cpucycles_timebase_info(struct counter_info *info);

#endif

#endif
