/* median.h: the figure bench-hotpath and bench-perfread print, the median
 * difference between back-to-back reads (the way a caller measures an
 * empty function), over READS reads. */
#ifndef CPUCYCLES_BENCH_MEDIAN_H
#define CPUCYCLES_BENCH_MEDIAN_H

#include <stdlib.h>

#define READS 10001

/* qsort's order for long long. */
static int compare(const void *a, const void *b)
{
  long long x = *(const long long *) a, y = *(const long long *) b;
  return (x > y) - (x < y);
}

/* The median of t[i + 1] - t[i] over the READS reads in t. */
static long long median_step(const long long *t)
{
  static long long d[READS - 1];
  int i;
  for (i = 0; i < READS - 1; i++) d[i] = t[i + 1] - t[i];
  qsort(d, READS - 1, sizeof d[0], compare);
  return d[(READS - 1) / 2];
}

#endif
