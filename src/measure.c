/* The arithmetic behind cpucycles-info's iqm and observed-persecond lines;
 * see measure.h and cpucycles-info(1). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stdio.h>

#include "measure.h"

void measure_differences(const long long *t, int n, long long *d)
{
  int i;
  for (i = 0; i < n; i++)
    d[i] = (long long) ((unsigned long long) t[i + 1] - (unsigned long long) t[i]);
}

/* floor(x / j) and the remainder in [0, j), for j > 0. */
static void divide_down(long long x, long long j, long long *q, long long *r)
{
  *q = x / j;
  *r = x % j;
  if (*r < 0) {
    *q -= 1;
    *r += j;
  }
}

long long measure_iqm(const long long *d, int n)
{
  long long u[MEASURE_DIFFERENCES];
  long long quotients = 0, remainders = 0, half;
  int i, j;

  if (n < 4 || n > MEASURE_DIFFERENCES || n % 4) return 0;
  for (i = 0; i < n; i++) u[i] = d[i];
  for (i = 1; i < n; i++) { /* insertion sort: n is at most 64 */
    long long v = u[i];
    for (j = i; j > 0 && u[j - 1] > v; j--) u[j] = u[j - 1];
    u[j] = v;
  }
  /* The mean of the middle half, summed as quotients and remainders of
   * each value by their count: neither sum can overflow, and the result
   * lies between the smallest and the largest of them. */
  half = n / 2;
  for (i = n / 4; i < 3 * n / 4; i++) {
    long long q, r;
    divide_down(u[i], half, &q, &r);
    quotients += q;
    remainders += r;
  }
  return quotients + (remainders + half / 2) / half;
}

int measure_print_deviation(FILE *out, long long x, long long base)
{
  if (x >= base)
    return fprintf(out, "+%llu", (unsigned long long) x - (unsigned long long) base);
  return fprintf(out, "-%llu", (unsigned long long) base - (unsigned long long) x);
}

int measure_print_iqm(FILE *out, const long long *t)
{
  long long d[MEASURE_DIFFERENCES], iqm;
  int i;

  measure_differences(t, MEASURE_DIFFERENCES, d);
  iqm = measure_iqm(d, MEASURE_DIFFERENCES);
  if (fprintf(out, "cpucycles iqm %lld ", iqm) < 0) return -1;
  for (i = 0; i < MEASURE_DIFFERENCES; i++)
    if (measure_print_deviation(out, d[i], iqm) < 0) return -1;
  return fprintf(out, "\n");
}

/* The clock reads whole microseconds: a reading m stands for a moment in
 * [m, m + 1).  t01 and t10 were both read between the two clock readings,
 * so less than m1 + 1 - m0 microseconds separate them: their count over
 * that is a lower bound.  t00 and t11 enclose both clock readings, so more
 * than m1 - m0 - 1 microseconds separate them: an upper bound. */
int measure_observed_bounds(const struct observation *o, double *lo, double *hi)
{
  double inner, outer, elapsed;

  if (o->t01 < o->t00 || o->t10 < o->t01 || o->t11 < o->t10) return 0;
  if (o->m1 < o->m0) return 0;
  elapsed = (double) ((unsigned long long) o->m1 - (unsigned long long) o->m0);
  if (elapsed <= 2) return 0;
  inner = (double) ((unsigned long long) o->t10 - (unsigned long long) o->t01);
  outer = (double) ((unsigned long long) o->t11 - (unsigned long long) o->t00);
  *lo = floor(1000000.0 * inner / (elapsed + 1));
  *hi = ceil(1000000.0 * outer / (elapsed - 1));
  return 1;
}
