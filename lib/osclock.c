/* osclock.c: whether the OS clocks must bypass the vDSO.  See osclock.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "osclock.h"
#if defined(__linux__)
#include <sys/prctl.h>
#endif

int cpucycles_osclock_use_syscall;
static int asked;

void cpucycles_osclock_setup(void)
{
#if defined(__linux__) && defined(PR_GET_TSC) && defined(PR_TSC_SIGSEGV)
  int tsc = 0;
  /* once: the first call asks for all the OS clocks */
  if (__atomic_exchange_n(&asked, 1, __ATOMIC_RELAXED)) return;
  /* EINVAL off x86: there is no such switch, and nothing to avoid. */
  if (prctl(PR_GET_TSC, &tsc, 0, 0, 0) == 0 && tsc == PR_TSC_SIGSEGV)
    __atomic_store_n(&cpucycles_osclock_use_syscall, 1, __ATOMIC_RELAXED);
#else
  (void) asked;
#endif
}

int cpucycles_rdtsc_disabled(void)
{
  cpucycles_osclock_setup();
  return __atomic_load_n(&cpucycles_osclock_use_syscall, __ATOMIC_RELAXED);
}
