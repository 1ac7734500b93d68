/* timebase.h: the PowerPC time base's rate, for ppc32-mftb and ppc64-mftb.
 * Declares nothing on other hosts. */
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
 * the rate the OS states (glibc's __ppc_get_timebase_freq(), else
 * /proc/cpuinfo's "timebase" line read here), or rate_unknown where it
 * states none (qemu-user).  0, or a refusal when implausible. */
int cpucycles_timebase_setup(struct counter_info *info);

#endif

#endif
