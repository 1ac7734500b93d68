/* cross-rate: whether the chosen counter counts at persecond, under
 * qemu-user CPU models that state a wrong rate (tests/check-cross.sh:
 * cortex-a53,cntfrq=N makes CNTVCT_EL0 tick at N while CNTFRQ_EL0 says
 * 62.5 MHz) or hide a working one (qemu32,-tsc clears CPUID's TSC bit).
 *
 *   cross-rate [NAME]
 *
 * The first call traced (its lines let check-cross.sh compare a scaling),
 * then cpucycles() across 300 ms of CLOCK_MONOTONIC: the counter chosen
 * must advance within 2% of persecond a second, and be NAME where given.
 * Prints "cross-rate: ..." last; exits 1 otherwise. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "cpucycles.h"

static double seconds(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

int main(int argc, char **argv)
{
  struct timespec pause = { 0, 300000000L };
  const char *name;
  long long persecond, c0, c1;
  double t0, t1, ratio;
  int ok;

  setvbuf(stdout, 0, _IONBF, 0);
  cpucycles_tracesetup();
  name = cpucycles_implementation();
  persecond = cpucycles_persecond();
  t0 = seconds();
  c0 = cpucycles();
  nanosleep(&pause, 0);
  c1 = cpucycles();
  t1 = seconds();
  ratio = (double) (c1 - c0) / (t1 - t0) / (double) persecond;
  ok = strcmp(name, "default-zero") != 0 && ratio > 0.98 && ratio < 1.02
       && (argc < 2 || strcmp(name, argv[1]) == 0);
  printf("cross-rate: %s: %s, persecond %lld, %.4f of it a second%s%s\n",
         ok ? "ok" : "FAIL", name, persecond, ratio,
         argc > 1 ? ", expected " : "", argc > 1 ? argv[1] : "");
  return ok ? 0 : 1;
}
