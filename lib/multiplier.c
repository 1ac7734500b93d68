/* The measured multiplier of a timer of unknown rate.  See multiplier.h.
 *
 * libcpucycles (wrapper.c, FINDMULTIPLIER) estimates cycles per tick three
 * times for each denominator 2^j it tries, each estimate at least 10 ms
 * and 1000 ticks of the timer against gettimeofday, and keeps the timer
 * when the three times 2^j lie within 0.2 of one integer k, scaling by
 * k/2^j.  Here the three estimates are taken once and every denominator
 * is tried on them (30 ms, not up to 330 ms), against CLOCK_MONOTONIC,
 * and a timer that does not reach 1000 ticks in a second is given up
 * (libcpucycles waits for it forever).
 *
 * Each reading of the timer is bracketed by two clock readings and taken
 * again (up to MULTIPLIER_RETRIES times) when the two are more than
 * MULTIPLIER_BRACKET_USEC apart: a thread descheduled between the timer
 * and the clock (milliseconds on a loaded machine) would otherwise skew an
 * estimate by that much over 10 ms, which libcpucycles survives only by
 * measuring again for the next denominator. */
#include "counter.h"
#include "adapters.h"
#include "multiplier.h"

#define MULTIPLIER_MAX_DENOMINATOR 1024
#define MULTIPLIER_TOLERANCE 0.2
#define MULTIPLIER_BRACKET_USEC 10
#define MULTIPLIER_RETRIES 100

static long long (*clock_of_measurement)(void) = cpucycles_clock_usec;

void cpucycles_multiplier_set_clock(long long (*clock_usec)(void))
{
  clock_of_measurement = clock_usec ? clock_usec : cpucycles_clock_usec;
}

double cpucycles_multiplier_of(const double *estimates, int n)
{
  double denominator;
  int i;

  if (n < 1) return -1;
  for (denominator = 1; denominator <= MULTIPLIER_MAX_DENOMINATOR; denominator *= 2) {
    double k = (double) (long long) (estimates[0] * denominator + 0.5);
    int fits = k >= 1;
    for (i = 0; i < n && fits; i++) {
      double error = estimates[i] * denominator - k;
      if (error > MULTIPLIER_TOLERANCE || error < -MULTIPLIER_TOLERANCE) fits = 0;
    }
    if (fits) return k / denominator;
  }
  return -1;
}

/* A reading of the timer and the clock's time of it: the middle of two
 * clock readings around it, taken again while they are far apart (the
 * last one is kept after MULTIPLIER_RETRIES). */
static void reading(long long (*read)(void), long long (*clock)(void),
                    long long *ticks, long long *usec)
{
  long long before, after;
  int tries = 0;

  do {
    before = clock();
    *ticks = read();
    after = clock();
  } while (after - before > MULTIPLIER_BRACKET_USEC && ++tries < MULTIPLIER_RETRIES);
  *usec = before + (after - before) / 2;
}

/* persecond * elapsed / ticks over at least MULTIPLIER_USEC and
 * MULTIPLIER_TICKS; 0 when the timer is too slow or goes backwards.
 * Differences are taken before any product: no overflow. */
static double estimate(long long (*read)(void), long long (*clock)(void),
                       long long persecond)
{
  long long t0, t1, us0, us1;
  unsigned long long ticks;

  reading(read, clock, &t0, &us0);
  do {
    reading(read, clock, &t1, &us1);
    if (us1 - us0 > MULTIPLIER_LIMIT_USEC || t1 < t0) return 0;
    ticks = (unsigned long long) t1 - (unsigned long long) t0; /* t1 >= t0 */
  } while (us1 - us0 < MULTIPLIER_USEC || ticks < MULTIPLIER_TICKS);
  return (double) persecond * 1e-6 * (double) (us1 - us0) / (double) ticks;
}

double cpucycles_multiplier_measure(long long (*read)(void), long long persecond,
                                    double *first)
{
  double estimates[MULTIPLIER_ESTIMATES];
  long long (*clock)(void) = clock_of_measurement;
  int i;

  if (first) *first = 0;
  if (persecond <= 0) return -1;
  for (i = 0; i < MULTIPLIER_ESTIMATES; i++) {
    estimates[i] = estimate(read, clock, persecond);
    if (estimates[i] <= 0) return -1;
    if (i == 0 && first) *first = estimates[0];
  }
  return cpucycles_multiplier_of(estimates, MULTIPLIER_ESTIMATES);
}
