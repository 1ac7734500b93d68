/* Wrappers for counters that cannot be called directly: those that need
 * scaling to cycles, and 32-bit counters that need extending to 64 bits. */
#ifndef CPUCYCLES_ADAPTERS_H
#define CPUCYCLES_ADAPTERS_H

#include <stdatomic.h>
#include "select.h"

/* extend32: a 32-bit counter made 64-bit with the help of a clock.
 *
 * The state is an anchor: a clock reading in microseconds and the 64-bit
 * tick count at that moment.  A new 32-bit reading is placed at the number
 * of wraps since the anchor that the elapsed clock time predicts, so the
 * answer is exact while the prediction is off by less than 2^31 ticks.
 * Every call whose anchor is a millisecond old or more moves the anchor
 * forward, which keeps that prediction short.
 *
 * Many threads may call at once: the anchor is kept twice (a "latch":
 * readers use the copy not being written, and retry if a writer finished
 * meanwhile), and one writer at a time moves it, others simply do not.  No
 * caller ever waits for another, so a signal handler may call it too. */
struct extend32_anchor {
  _Atomic long long usec;
  _Atomic long long ticks;
};

struct extend32 {
  double ticks_per_usec;
  atomic_ullong sequence;
  atomic_flag writing;
  struct extend32_anchor copy[2];
};

/* Start at a first reading (raw, taken at usec). */
void cpucycles_extend32_start(struct extend32 *e, double ticks_per_usec,
                              unsigned long long raw, long long usec);
/* The 64-bit count for a 32-bit reading raw taken at usec. */
long long cpucycles_extend32_value(struct extend32 *e,
                                   unsigned long long raw, long long usec);

/* Exact scaling by a ratio num/den of positive integers (persecond over
 * a counter's frequency): floor(ticks * num / den) modulo 2^64, for every
 * 64-bit ticks, with no division on the hot path.
 *
 * num/den = whole + rest/den (rest < den).  fraction is 2^128 * rest/den
 * rounded up, so ticks * fraction / 2^128 exceeds ticks * rest/den by less
 * than ticks/2^128 < 2^-64 <= 1/den: too little to reach the next integer
 * (ticks * rest/den lies at most 1 - 1/den past an integer), so its integer part
 * is exactly floor(ticks * rest/den).  Each value thus costs three
 * multiplications: ticks * whole, and the upper half of the 192-bit
 * ticks * fraction. */
struct exact_scale {
  unsigned long long whole;          /* floor(num / den) */
  unsigned long long fraction_high;  /* ceil(2^128 * (num mod den) / den), */
  unsigned long long fraction_low;   /* in two halves */
};

/* Prepare scaling by num/den; num and den positive (den < 2^63). */
void cpucycles_exact_scale_start(struct exact_scale *s, long long num, long long den);
/* floor(ticks * num / den) modulo 2^64, as the wrappers compute it: with
 * the compiler's 128-bit integers where it has them, else as below. */
unsigned long long cpucycles_exact_scale(const struct exact_scale *s,
                                         unsigned long long ticks);
/* The same with 64-bit integers only (32x32-bit products), which 32-bit
 * ISAs use; callable everywhere, for tests. */
unsigned long long cpucycles_exact_scale_portable(const struct exact_scale *s,
                                                  unsigned long long ticks);

/* The library's clock: CLOCK_MONOTONIC in microseconds when the kernel
 * has it (immune to clock steps), else gettimeofday; -1 when both are
 * refused (a seccomp filter, where the system calls are used). */
long long cpucycles_clock_usec(void);

/* A counter reading and the clock's time of it, the one paired reading of
 * the library (extend32's rate, the measured multiplier): the middle of
 * two clock readings around read(), taken again while they are more than
 * 10 us apart (a preemption or an interrupt came between them), up to 100
 * times, the last kept.  clock is cpucycles_clock_usec or a test's.
 * -1 when the clock answers -1. */
int cpucycles_paired_reading(long long (*read)(void), long long (*clock)(void),
                             long long *usec, long long *ticks);

/* Prepare the wrapper the choice needs and return the function that
 * cpucycles() should become: the counter's own read when it counts cycles
 * in 64 bits (no frequency, or one equal to persecond), else a wrapper.
 * persecond is the CPU frequency estimate.  A counter with a frequency is
 * scaled by exactly persecond / choice->info.frequency (choice->scaling
 * is that ratio rounded to a double, for the trace); a timer of unknown
 * rate (info.rate_unknown) with the multiplier the probe measured in
 * choice->scaling, by persecond / rate, where rate is persecond / scaling
 * rounded to the hertz.  The wrapper returns
 * floor((ticks - ticks at installation) * persecond / frequency), exactly
 * for ticks from 2^61 before the installation's to 2^63 after it (so a
 * reading behind it is negative), the result modulo 2^64 (as a
 * two's-complement long long); beyond, the ticks wrap modulo 2^64 too.
 * A 32-bit counter's extended ticks count from its first reading's low
 * 32 bits, scaled the same way (1/1 without a frequency). */
long long (*cpucycles_adapter_for(const struct choice *choice,
                                  long long persecond))(void);

#endif
