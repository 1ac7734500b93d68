/* cpucycles-info: what this machine offers libcpucycles.  See
 * cpucycles-info(1).  Prints the version, one tracesetup line per
 * compiled-in counter, the frequency estimate, the chosen counter, the
 * frequency observed against the clock, and consecutive differences. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "cpucycles.h"

#define DIFFERENCES 1000
#define SHOWN 16

static int compare(const void *a, const void *b)
{
  long long x = *(const long long *) a, y = *(const long long *) b;
  return (x > y) - (x < y);
}

static double seconds(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + t.tv_nsec / 1e9;
}

/* Cycles per second seen over about a tenth of a second of wall time. */
static double observed_persecond(void)
{
  double start = seconds(), now;
  long long c0 = cpucycles(), c1;
  do {
    now = seconds();
  } while (now - start < 0.1);
  c1 = cpucycles();
  return (double) (c1 - c0) / (now - start);
}

int main(void)
{
  static long long t[DIFFERENCES + 1], d[DIFFERENCES];
  int i;

  printf("cpucycles version %s\n", cpucycles_version());
  fflush(stdout); /* the library writes its trace lines to fd 1 itself */
  cpucycles_tracesetup();
  cpucycles();
  printf("cpucycles persecond %lld\n", cpucycles_persecond());
  printf("cpucycles implementation %s\n", cpucycles_implementation());
  printf("cpucycles observed persecond %.0f\n", observed_persecond());

  for (i = 0; i <= DIFFERENCES; i++) t[i] = cpucycles();
  for (i = 0; i < DIFFERENCES; i++) d[i] = t[i + 1] - t[i];
  printf("cpucycles differences");
  for (i = 0; i < SHOWN; i++) printf(" %lld", d[i]);
  printf("\n");
  qsort(d, DIFFERENCES, sizeof d[0], compare);
  printf("cpucycles median %lld\n", d[DIFFERENCES / 2]);
  return 0;
}
