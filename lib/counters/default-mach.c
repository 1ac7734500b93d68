/* default-mach: mach_absolute_time() on macOS and iOS (the commpage, no
 * system call), off-core: numer/denom nanoseconds per tick, 1/1 on Intel
 * Macs, 125/3 on Apple silicon (arm64-vct's 24 MHz counter).  Only
 * compiled (tests/check-darwin.sh), never run here (doc/counters.md). */
#if !defined(__APPLE__) || !defined(__MACH__)
#error "default-mach needs macOS or iOS (mach_absolute_time)"
#endif

#include <mach/mach_time.h>
#include "counter.h"

static long long mach_read(void)
{
  return (long long) mach_absolute_time();
}

static int mach_setup(struct counter_info *info)
{
  mach_timebase_info_data_t timebase;
  double hz;
  if (mach_timebase_info(&timebase) != 0) return -1;
  if (timebase.numer == 0 || timebase.denom == 0) return -1;
  /* ticks per second = 1e9 ns / (numer/denom ns per tick) */
  hz = 1e9 * (double) timebase.denom / (double) timebase.numer;
  if (!(hz >= 1e3 && hz <= 1e11)) return -1;
  return counter_accept(info, COUNTER_OFFCORE, (long long) (hz + 0.5), 0);
}

const struct counter cpucycles_counter_default_mach = {
  "default-mach", mach_read, mach_setup, 0, 0, COUNTER_ASKS
};
