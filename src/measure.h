/* The arithmetic behind cpucycles-info's measurement lines, apart from the
 * clock and the counter so that tests can feed it chosen numbers.  See
 * cpucycles-info(1) for what each line means. */
#ifndef CPUCYCLES_MEASURE_H
#define CPUCYCLES_MEASURE_H

#include <stdio.h>

/* The iqm line: this many differences, from one more back-to-back calls.
 * A multiple of 4, so that the middle half is exactly half. */
#define MEASURE_DIFFERENCES 64

/* d[i] = t[i + 1] - t[i] for i < n, modulo 2^64 (no overflow whatever the
 * counter returned). */
void measure_differences(const long long *t, int n, long long *d);

/* The interquartile mean of d[0..n-1] (n a multiple of 4, 4 <= n <= 64):
 * the mean of the middle n/2 values once sorted, rounded to the nearest
 * integer, halves up.  Exact for every input: no sum can overflow. */
long long measure_iqm(const long long *d, int n);

/* Prints x - base as "+N" or "-N" (zero as "+0"), exactly, even where the
 * difference does not fit in a long long.  Returns fprintf's result. */
int measure_print_deviation(FILE *out, long long x, long long base);

/* Prints "cpucycles iqm M +d+d-d...\n" for the differences of the
 * MEASURE_DIFFERENCES + 1 counter values in t. */
int measure_print_iqm(FILE *out, const long long *t);

/* One timed loop: counter values read around two clock readings, in this
 * order: t00, clock m0, t01, the loop, t10, clock m1, t11.  The clock is
 * in whole microseconds. */
struct observation {
  long long t00, t01, t10, t11;
  long long m0, m1;
};

/* Bounds on the counter's rate, in units per second, from one
 * observation; 0 when it says nothing (the counter went back, or the
 * clock moved by 2 microseconds or less), 1 with *lo <= *hi otherwise. */
int measure_observed_bounds(const struct observation *o, double *lo, double *hi);

#endif
