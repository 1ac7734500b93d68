/* timebase.h: the frequency of the PowerPC time base, which ppc32-mftb and
 * ppc64-mftb both read (two ways of reading the same register, one way of
 * knowing how fast it ticks).  Built on every host; on anything but
 * PowerPC it declares nothing.
 *
 * Internal to the library: not exported from the shared library. */
#ifndef CPUCYCLES_TIMEBASE_H
#define CPUCYCLES_TIMEBASE_H

#if defined(__powerpc__)
#define CPUCYCLES_TIMEBASE_AVAILABLE 1

/* What the time-base frequency may plausibly be: 512 MHz on POWER8 and
 * later, tens of MHz on older and embedded parts. */
#define CPUCYCLES_TIMEBASE_MIN_HZ 1000000LL
#define CPUCYCLES_TIMEBASE_MAX_HZ 10000000000LL

/* The time base's ticks per second, as the OS tells it: glibc's
 * __ppc_get_timebase_freq() (the vDSO's __kernel_get_tbfreq, or the
 * "timebase" line of /proc/cpuinfo); without glibc, that line read here
 * (open/read into a stack buffer, strict decimal parse).  Returns a value
 * between CPUCYCLES_TIMEBASE_MIN_HZ and CPUCYCLES_TIMEBASE_MAX_HZ; 0 when
 * the OS states none (no such line: qemu-user shows the host's
 * /proc/cpuinfo); -1 when what it states is implausible. */
long long cpucycles_timebase_frequency(void);

struct counter_info;

/* What a time-base counter's setup says: off-core, scaled by persecond
 * over cpucycles_timebase_frequency(), 64 bits; or, when the OS states no
 * frequency, a timer of unknown rate whose multiplier the probe measures
 * (rate_unknown), as libcpucycles measures it.  Returns 0, or -1 (info
 * untouched) when the OS states an implausible frequency. */
int cpucycles_timebase_info(struct counter_info *info);

#endif

#endif
