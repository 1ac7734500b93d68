/* default-qpc: Windows' QueryPerformanceCounter, at the rate
 * QueryPerformanceFrequency states, scaled to cycles by the CPU frequency
 * estimate.  Microsoft's recommended high-resolution time stamp: the same
 * on every processor, unaffected by power states, monotonic, and it does
 * not wrap within centuries.  Windows reads it from the TSC where the TSC
 * is invariant and synchronised (usually at a 10 MHz rate, the TSC divided
 * down), else from a platform timer (HPET, ACPI PM timer) at that timer's
 * rate.  The frequency is fixed at boot, so asking once suffices.  An OS
 * clock to the probe: penalty 200, and its rate is never held against the
 * CPU frequency (doc/counters.md). */
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
  info->kind = COUNTER_OSCLOCK;
  info->frequency = (long long) f.QuadPart;
  info->only32 = 0;
  return 0;
}

const struct counter cpucycles_counter_default_qpc = {
  "default-qpc", qpc_read, qpc_setup, 0, 0, COUNTER_ASKS
};
