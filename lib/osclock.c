/* osclock.c: whether the OS clocks must bypass the vDSO.  See osclock.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "annotate.h"
#include "osclock.h"
#if defined(__linux__) && (defined(__x86_64__) || defined(__i386__))
#include <sys/prctl.h>
#if defined(PR_GET_TSC) && defined(PR_TSC_SIGSEGV)
#define ASK_PR_GET_TSC 1
#endif
#endif

int cpucycles_osclock_use_syscall;
static int asked;
static int rdtsc_state = CPUCYCLES_RDTSC_ALLOWED;

void cpucycles_osclock_setup(void)
{
#ifdef ASK_PR_GET_TSC
  int tsc = 0, state;
  /* once: the first call asks for all the OS clocks */
  if (__atomic_exchange_n(&asked, 1, __ATOMIC_RELAXED)) return;
  if (prctl(PR_GET_TSC, &tsc, 0, 0, 0) == 0)
    state = tsc == PR_TSC_SIGSEGV ? CPUCYCLES_RDTSC_FAULTS : CPUCYCLES_RDTSC_ALLOWED;
  else
    /* Every x86 kernel since 2.6.26 answers: a refusal (EPERM, ENOSYS,
     * EINVAL) is a seccomp filter's, in a sandbox that may well have
     * disabled RDTSC first.  Not knowing, the clocks take the system
     * call, which cannot fault; the TSC counters are tried as any counter
     * that might fault. */
    state = CPUCYCLES_RDTSC_UNKNOWN;
  /* atomics, read by every caller of the OS clocks (annotate.h) */
  CPUCYCLES_PUBLISHED(&rdtsc_state, sizeof rdtsc_state);
  CPUCYCLES_PUBLISHED(&cpucycles_osclock_use_syscall, sizeof cpucycles_osclock_use_syscall);
  __atomic_store_n(&rdtsc_state, state, __ATOMIC_RELAXED);
  if (state != CPUCYCLES_RDTSC_ALLOWED)
    __atomic_store_n(&cpucycles_osclock_use_syscall, 1, __ATOMIC_RELAXED);
#else
  /* Elsewhere there is no such switch, and the vDSO reads no TSC. */
  (void) asked;
#endif
}

enum cpucycles_rdtsc cpucycles_rdtsc_state(void)
{
  cpucycles_osclock_setup();
  return (enum cpucycles_rdtsc) __atomic_load_n(&rdtsc_state, __ATOMIC_RELAXED);
}
