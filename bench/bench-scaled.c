/* bench-scaled: what the scaling wrapper costs, the function cpucycles()
 * becomes for a counter that ticks at another rate than the CPU (an OS
 * clock, a timer, a TSC whose rate differs from the estimate), next to the
 * same counter called directly through a pointer (the baseline: what
 * cpucycles() is for a counter that needs no scaling), in the same run.
 *
 * The wrapper is the one the library installs (cpucycles_adapter_for),
 * scaling by the ratios of two real cases: persecond over 1 GHz
 * (default-monotonic's nanoseconds) and over 1 MHz (default-gettimeofday's
 * microseconds).  Three figures for each:
 *  - latency: nanoseconds per call when each call's counter reading
 *    depends on the previous call's result (the wrapper's arithmetic on
 *    the critical path), over a counter that is a memory increment;
 *  - throughput: nanoseconds per call, calls independent, same counter;
 *  - what a caller sees: the median back-to-back difference over the
 *    cheapest real counter (x86-64: rdtsc; arm64: cntvct_el0; elsewhere
 *    CLOCK_MONOTONIC), in that counter's ticks (the wrapper's differences
 *    divided by its ratio).
 * Times are medians over 21 rounds of 100000 calls, on CLOCK_MONOTONIC.
 * Target: the wrapper within a few nanoseconds of the baseline. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "adapters.h"
#include "inline-counter.h"
#include "median.h"

#define ROUNDS 21
#define CALLS 100000
#define PERSECOND 2596094000LL /* this development machine's estimate */

#ifdef INLINE_COUNTER
#define COUNTER INLINE_COUNTER
static long long counter_read(void)
{
  return inline_counter();
}
#else
#define COUNTER "clock_gettime(CLOCK_MONOTONIC)"
static long long counter_read(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long) t.tv_sec * 1000000000LL + t.tv_nsec;
}
#endif

/* The memory counter: the bench moves it, so a call's reading can be
 * made to wait for the previous call's result. */
static volatile long long memory;
static long long memory_read(void)
{
  return memory;
}

static int no_setup(struct counter_info *info)
{
  (void) info;
  return 0;
}

static const struct counter real = { COUNTER, counter_read, no_setup, 0, 0, COUNTER_TRIES };
static const struct counter fake = { "memory", memory_read, no_setup, 0, 0, COUNTER_TRIES };

static double now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec * 1e9 + (double) t.tv_nsec;
}

/* ns per call, each call's reading depending on the previous result
 * (x >> 62 is 0 for these values, which the compiler cannot know). */
static double latency(long long (*volatile fn)(void))
{
  double start = now_ns();
  long long x = 0;
  int i;
  for (i = 0; i < CALLS; i++) {
    memory = memory + 1 + (x >> 62);
    x = fn();
  }
  return (now_ns() - start) / CALLS;
}

/* ns per call, calls independent. */
static double throughput(long long (*volatile fn)(void))
{
  double start = now_ns();
  volatile long long sink;
  int i;
  for (i = 0; i < CALLS; i++) sink = fn();
  (void) sink;
  return (now_ns() - start) / CALLS;
}

/* Median back-to-back difference of fn's values, over ratio. */
static double back_to_back(long long (*fn)(void), double ratio)
{
  static long long t[READS];
  int i;
  for (i = 0; i < READS; i++) t[i] = fn();
  return (double) median_step(t) / ratio;
}

static int compare_double(const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double median(double *v)
{
  qsort(v, ROUNDS, sizeof v[0], compare_double);
  return v[ROUNDS / 2];
}

/* The wrapper the library installs for c at persecond/frequency. */
static long long (*wrapper(const struct counter *c, long long frequency))(void)
{
  struct choice choice = { c, { .kind = COUNTER_OSCLOCK }, 0, 0 };
  choice.info.frequency = frequency;
  choice.scaling = (double) PERSECOND / (double) frequency;
  return cpucycles_adapter_for(&choice, PERSECOND);
}

static void figure(const char *what, double base, double scaled, const char *unit)
{
  printf("  %s: baseline %.2f %s, scaled wrapper %.2f %s", what, base, unit, scaled, unit);
  if (base > 0) printf(", ratio %.3f", scaled / base);
  printf("\n");
}

int main(void)
{
  static const struct { const char *what; long long frequency; } cases[] = {
    { "persecond / 1 GHz (default-monotonic)", 1000000000LL },
    { "persecond / 1 MHz (default-gettimeofday)", 1000000LL },
  };
  long long (*volatile direct)(void);
  size_t k;
  int r;

  printf("scaled wrapper, persecond %lld\n", PERSECOND);
  for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    double base_lat[ROUNDS], lat[ROUNDS], base_thr[ROUNDS], thr[ROUNDS];
    double base_b2b[ROUNDS], b2b[ROUNDS];
    double ratio = (double) PERSECOND / (double) cases[k].frequency;
    long long (*volatile scaled)(void);

    direct = memory_read;
    scaled = wrapper(&fake, cases[k].frequency);
    for (r = 0; r < ROUNDS; r++) {
      base_lat[r] = latency(direct);
      lat[r] = latency(scaled);
      base_thr[r] = throughput(direct);
      thr[r] = throughput(scaled);
    }
    direct = counter_read;
    scaled = wrapper(&real, cases[k].frequency);
    for (r = 0; r < ROUNDS; r++) {
      base_b2b[r] = back_to_back(direct, 1.0);
      b2b[r] = back_to_back(scaled, ratio);
    }
    printf("%s, ratio %f:\n", cases[k].what, ratio);
    figure("latency", median(base_lat), median(lat), "ns/call");
    figure("throughput", median(base_thr), median(thr), "ns/call");
    figure("back-to-back over " COUNTER, median(base_b2b), median(b2b), "ticks");
  }
  return 0;
}
