/* Wrappers for counters that need scaling to cycles or extending from 32
 * to 64 bits. */
#ifndef CPUCYCLES_ADAPTERS_H
#define CPUCYCLES_ADAPTERS_H

#include <stdatomic.h>
#include "counter.h"

/* extend32: a 32-bit counter made 64-bit with a clock.  An anchor (clock
 * microseconds, 64-bit ticks) places a new reading at the number of wraps
 * the elapsed time predicts: exact while the prediction is off by less
 * than 2^31 ticks; a call whose anchor is 1 ms old moves it forward.
 * The anchor is kept twice (a latch: readers use the copy not being
 * written, and retry if a writer finished meanwhile); one writer at a
 * time, others skip.  No caller waits: a signal handler may call it. */
struct extend32_anchor {
  _Atomic long long usec;
  _Atomic long long ticks;
};

struct extend32 {
  double ticks_per_usec;
  /* the anchor, last: adapters.c tells valgrind of it as one range */
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

/* Exact scaling by num/den (persecond over a frequency): floor(ticks *
 * num / den) modulo 2^64 for every 64-bit ticks, no division on the hot
 * path.  num/den = whole + rest/den; fraction is 2^128 * rest/den rounded
 * up, so ticks * fraction / 2^128 exceeds ticks * rest/den by less than
 * 2^-64 <= 1/den: too little to reach the next integer (ticks * rest/den
 * lies at most 1 - 1/den past one), so its integer part is exact. */
struct exact_scale {
  unsigned long long whole;          /* floor(num / den) */
  unsigned long long fraction_high;  /* ceil(2^128 * (num mod den) / den), */
  unsigned long long fraction_low;   /* in two halves */
};

/* Prepare scaling by num/den; num and den positive (den < 2^63). */
void cpucycles_exact_scale_start(struct exact_scale *s, long long num, long long den);
/* As the wrappers compute it: with 128-bit integers where the compiler
 * has them, else as below. */
unsigned long long cpucycles_exact_scale(const struct exact_scale *s,
                                         unsigned long long ticks);
/* With 32x32-bit products only (32-bit ISAs); everywhere, for tests. */
unsigned long long cpucycles_exact_scale_portable(const struct exact_scale *s,
                                                  unsigned long long ticks);

/* CLOCK_MONOTONIC in microseconds (immune to clock steps), else
 * gettimeofday; -1 when both are refused (a seccomp filter). */
long long cpucycles_clock_usec(void);

/* A reading and its time, the middle of two clock readings around it,
 * taken again (up to 100 times) while they are more than 10 us apart (a
 * preemption or an interrupt came between); *spread (may be NULL): how
 * far apart they were.  -1 when the clock says -1. */
int cpucycles_paired_reading(long long (*read)(void), long long (*clock)(void),
                             long long *usec, long long *ticks, long long *spread);

/* The function cpucycles() should become: the counter's own read when it
 * counts cycles in 64 bits, else a wrapper returning floor((ticks - ticks
 * at installation) * persecond / frequency) modulo 2^64, exact from 2^61
 * ticks before the installation to 2^63 after.  A timer of unknown rate
 * has frequency persecond / (the measured scaling), to the hertz.  A
 * 32-bit counter's extended ticks count from its first reading's low 32
 * bits (scaled 1/1 without a frequency). */
long long (*cpucycles_adapter_for(const struct choice *choice,
                                  long long persecond))(void);

#endif
