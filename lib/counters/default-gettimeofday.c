/* default-gettimeofday: wall-clock microseconds, the last resort before
 * default-zero, coarse and subject to clock steps (osclock.h). */
#include <errno.h>
#include "counter.h"
#include "osclock.h"

static long long gettimeofday_read(void)
{
  struct timeval t;
  if (cpucycles_osclock_gettimeofday(&t) != 0) return 0;
  return (long long) ((unsigned long long) t.tv_sec * 1000000ULL +
                      (unsigned long long) t.tv_usec);
}

static int gettimeofday_setup(struct counter_info *info)
{
  struct timeval t;
  cpucycles_osclock_choose();
  if (cpucycles_osclock_gettimeofday(&t) != 0)
    return counter_refuse(info, "gettimeofday", errno);
  return counter_accept(info, COUNTER_OSCLOCK, 1000000LL, 0);
}

const struct counter cpucycles_counter_default_gettimeofday = {
  "default-gettimeofday", gettimeofday_read, gettimeofday_setup, 0, 0, COUNTER_ASKS
};
