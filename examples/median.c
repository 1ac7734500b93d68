/* Times a function many times with cpucycles() and prints the median and
 * the quartiles of its cycle counts, next to those of an empty interval
 * (what reading the counter twice costs).  A single count can include an
 * interrupt or a move to another core; the median of many does not, and
 * the quartiles show how much the counts spread.  Compare two versions of
 * a function by their medians, measured the same way on the same machine.
 *
 *   cc median.c $(pkg-config --cflags --libs cpucycles) -o median
 *   ./median            (or ./median RUNS, default 1001)
 */
#include <stdio.h>
#include <stdlib.h>
#include <cpucycles.h>

#define MAX_RUNS 100001

static long long counts[MAX_RUNS];

/* The function to time: replace it with yours. */
static volatile unsigned long long sink;
static void function_to_time(void)
{
  unsigned long long x = sink;
  int i;
  for (i = 0; i < 100; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  sink = x;
}

static void do_nothing(void)
{
}

static int by_value(const void *a, const void *b)
{
  long long x = *(const long long *) a, y = *(const long long *) b;
  return (x > y) - (x < y);
}

/* Times fn runs times, then prints the median and the quartiles. */
static void measure(const char *what, void (*fn)(void), int runs)
{
  int i;
  for (i = 0; i < runs; i++) {
    long long t0 = cpucycles();
    fn();
    counts[i] = cpucycles() - t0;
  }
  qsort(counts, (size_t) runs, sizeof counts[0], by_value);
  printf("%s: median %lld cycles, quartiles %lld and %lld\n", what,
         counts[runs / 2], counts[runs / 4], counts[3 * runs / 4]);
}

int main(int argc, char **argv)
{
  int runs = 1001;
  if (argc > 1) {
    char *end;
    long n = strtol(argv[1], &end, 10);
    if (*end || n < 4 || n > MAX_RUNS) {
      fprintf(stderr, "usage: %s [RUNS], RUNS from 4 to %d\n", argv[0], MAX_RUNS);
      return 2;
    }
    runs = (int) n;
  }
  /* cpucycles_implementation() makes the library choose its counter now:
   * no timed count pays for that first call. */
  printf("counter %s, %d runs each\n", cpucycles_implementation(), runs);
  measure("function", function_to_time, runs);
  measure("empty interval", do_nothing, runs);
  return 0;
}
