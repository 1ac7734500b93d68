/* default-qpc: QueryPerformanceCounter at QueryPerformanceFrequency's rate
 * (fixed at boot): Windows' recommended time stamp, monotonic, the same on
 * every processor; the invariant TSC divided down (usually 10 MHz), else
 * HPET or the ACPI PM timer.  An OS clock to the probe. */
#ifndef _WIN32
#error "default-qpc needs Windows"
#endif

#include <windows.h>
#include "counter.h"

static long long qpc_read(void)
{
  LARGE_INTEGER t;
  QueryPerformanceCounter(&t); /* cannot fail since Windows XP */
  return (long long) t.QuadPart;
}

static int qpc_setup(struct counter_info *info)
{
  LARGE_INTEGER f, t;
  if (!QueryPerformanceFrequency(&f) || f.QuadPart <= 0) return -1;
  if (!QueryPerformanceCounter(&t)) return -1;
  return counter_accept(info, COUNTER_OSCLOCK, (long long) f.QuadPart, 0);
}

const struct counter cpucycles_counter_default_qpc = {
  "default-qpc", qpc_read, qpc_setup, 0, 0, COUNTER_ASKS
};
