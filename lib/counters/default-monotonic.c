/* default-monotonic: clock_gettime(CLOCK_MONOTONIC) in nanoseconds
 * (osclock.h).  A libc may declare the clock that an old kernel refuses:
 * setup reads it once. */
#ifdef _WIN32
/* mingw-w64's clock_gettime is winpthread's DLL; default-qpc reads the
 * same QueryPerformanceCounter directly. */
#error "default-monotonic: on Windows, default-qpc"
#endif

#include <errno.h>
#include "counter.h"
#include "osclock.h"

#if !defined(CLOCK_MONOTONIC)
#error "default-monotonic needs CLOCK_MONOTONIC"
#endif

static long long monotonic_read(void)
{
  struct timespec t;
  if (cpucycles_osclock_gettime(CLOCK_MONOTONIC, &t) != 0) return 0;
  /* Unsigned: a time namespace may offset the clock by centuries, and a
   * wrap is defined where a signed overflow is not. */
  return (long long) ((unsigned long long) t.tv_sec * 1000000000ULL +
                      (unsigned long long) t.tv_nsec);
}

static int monotonic_setup(struct counter_info *info)
{
  struct timespec t;
  cpucycles_osclock_choose();
  if (cpucycles_osclock_gettime(CLOCK_MONOTONIC, &t) != 0)
    return counter_refuse(info, "clock_gettime(CLOCK_MONOTONIC)", errno);
  return counter_accept(info, COUNTER_OSCLOCK, 1000000000LL, 0);
}

const struct counter cpucycles_counter_default_monotonic = {
  "default-monotonic", monotonic_read, monotonic_setup, 0, 0, COUNTER_ASKS
};
