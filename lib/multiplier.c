/* libcpucycles' multiplier search (wrapper.c, FINDMULTIPLIER): three
 * estimates and a k/2^j fit; where this one differs (taken once for all
 * denominators, paired readings): doc/selection.md, step 2, "Further". */
#include "counter.h"
#include "adapters.h"
#include "multiplier.h"

#define MULTIPLIER_MAX_DENOMINATOR 1024
#define MULTIPLIER_TOLERANCE 0.2
/* libcpucycles rejects "more than 0.2" away; exactly 0.2 (3.413 GHz over
 * 2.56 GHz, x 1024 = 1365.2) lands just beyond as a double: kept. */
#define MULTIPLIER_ROUNDING_MARGIN 1e-9

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
      if (error < 0) error = -error;
      fits = error <= MULTIPLIER_TOLERANCE + MULTIPLIER_ROUNDING_MARGIN;
    }
    if (fits) return k / denominator;
  }
  return -1;
}

/* persecond * elapsed / ticks; 0 when the timer is too slow or goes
 * backwards, or the clock does not answer.  Differences before products:
 * no overflow. */
static double estimate(long long (*read)(void), long long persecond)
{
  long long (*clock)(void) = cpucycles_multiplier_clock;
  long long t0, t1, us0, us1;
  unsigned long long ticks;
  if (cpucycles_paired_reading(read, clock, &us0, &t0, 0) != 0) return 0;
  do {
    if (cpucycles_paired_reading(read, clock, &us1, &t1, 0) != 0) return 0;
    if (us1 - us0 > MULTIPLIER_LIMIT_USEC || t1 < t0) return 0;
    ticks = (unsigned long long) t1 - (unsigned long long) t0; /* t1 >= t0 */
  } while (us1 - us0 < MULTIPLIER_USEC || ticks < MULTIPLIER_TICKS);
  return (double) persecond * 1e-6 * (double) (us1 - us0) / (double) ticks;
}

double cpucycles_multiplier_measure(long long (*read)(void), long long persecond,
                                    double *first)
{
  double estimates[MULTIPLIER_ESTIMATES];
  int i;
  if (first) *first = 0;
  if (persecond <= 0) return -1;
  for (i = 0; i < MULTIPLIER_ESTIMATES; i++) {
    estimates[i] = estimate(read, persecond);
    if (estimates[i] <= 0) return -1;
    if (i == 0 && first) *first = estimates[0];
  }
  return cpucycles_multiplier_of(estimates, MULTIPLIER_ESTIMATES);
}

void cpucycles_rate_window_open(struct rate_window *w, long long (*read)(void))
{
  if (cpucycles_paired_reading(read, cpucycles_multiplier_clock, &w->usec,
                               &w->ticks, &w->spread) != 0)
    w->spread = -1;
}

enum rate_verdict cpucycles_rate_window_close(const struct rate_window *w,
                                              long long (*read)(void),
                                              long long stated, double *seen)
{
  long long usec, ticks, spread;
  double elapsed, error, counted, hz = (double) stated * 1e-6;
  *seen = 0;
  if (w->spread < 0 || stated <= 0
      || cpucycles_paired_reading(read, cpucycles_multiplier_clock, &usec,
                                  &ticks, &spread) != 0
      || ticks < w->ticks)
    return RATE_NOT_CHECKED;
  /* a midpoint is within half its spread of the reading, plus 1.5 us of
   * truncation (the clock's microseconds, the halving) */
  elapsed = (double) (usec - w->usec);
  error = 0.5 * (double) (w->spread + spread) + 3;
  /* a difference first: no overflow */
  counted = (double) ((unsigned long long) ticks - (unsigned long long) w->ticks);
  if (elapsed > 0) *seen = counted / elapsed * 1e6;
  if (counted + 1 < hz * (elapsed - error) || counted - 1 > hz * (elapsed + error))
    return RATE_DISAGREES;
  return RATE_AGREES;
}
