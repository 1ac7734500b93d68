/* The multiplier of a timer whose rate nobody states: cycles per tick,
 * measured against a clock as libcpucycles measures every timer's.
 *
 * Where the hardware or the OS states a timer's rate (CNTFRQ_EL0, the
 * time-base frequency, CPUCFG), the probe scales by persecond over it and
 * measures nothing (select.c).  This is for the rest: firmware that left
 * CNTFRQ_EL0 0, a PowerPC kernel (or qemu-user) that gives no time-base
 * frequency.  Internal to the library. */
#ifndef CPUCYCLES_MULTIPLIER_H
#define CPUCYCLES_MULTIPLIER_H

#define MULTIPLIER_ESTIMATES 3        /* estimates that must agree */
#define MULTIPLIER_USEC 10000         /* each at least this long ... */
#define MULTIPLIER_TICKS 1000         /* ... and this many ticks */
#define MULTIPLIER_LIMIT_USEC 1000000 /* a timer slower than that: none */

/* The multiplier fit, the one rule for measured estimates (below) and
 * for persecond over a stated rate (cpucycles_scaling_of, n = 1): k/2^j
 * for the smallest j from 0 to 10 (and an integer k >= 1, the first
 * estimate times 2^j rounded) such that every estimate times 2^j lies
 * within 0.2 of k, libcpucycles' denominators and tolerance.  -1 when
 * there is none. */
double cpucycles_multiplier_of(const double *estimates, int n);

/* Cycles per tick of read, from MULTIPLIER_ESTIMATES estimates of
 * persecond * (clock microseconds) / ticks, each over at least
 * MULTIPLIER_USEC microseconds and MULTIPLIER_TICKS ticks (each reading
 * paired with the clock: cpucycles_paired_reading), then
 * cpucycles_multiplier_of().  -1 when the timer does not move enough
 * within MULTIPLIER_LIMIT_USEC, goes backwards, the clock does not
 * answer, or no k/2^j fits.
 * estimate, when not NULL, gets the first estimate (0 when none). */
double cpucycles_multiplier_measure(long long (*read)(void), long long persecond,
                                    double *estimate);

/* The clock the measurement reads, in microseconds: cpucycles_clock_usec
 * (CLOCK_MONOTONIC), in lib/multiplier-sys.c; test builds link
 * tests/seams.c in its place. */
extern long long (*const cpucycles_multiplier_clock)(void);

#endif
