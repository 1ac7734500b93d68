/* osclock.h: the OS clocks (CLOCK_MONOTONIC, gettimeofday), read through
 * the vDSO as usual, or through the system call itself when the vDSO would
 * fault.
 *
 * On x86, the vDSO computes the time with RDTSC when the clocksource is
 * the TSC (or kvm-clock).  A process that disabled RDTSC for itself
 * (prctl(PR_SET_TSC, PR_TSC_SIGSEGV): sandboxes, record-and-replay tools)
 * gets SIGSEGV from the vDSO, although the system call still answers.  The
 * kernel says so in advance (PR_GET_TSC, x86 Linux only).  The question
 * belongs to the TSC counters: cpucycles_rdtsc_state() asks it once, for
 * them and for the OS clocks (the probe tries the TSC counters before the
 * OS clocks).  A named OS clock (no TSC counter tried) asks it too, but
 * only where /proc/self/status says that no seccomp filter is installed:
 * a sandbox that kills on prctl must be able to name one.  Where a filter
 * may stand (or /proc says nothing), and where the question was refused,
 * nobody knows whether the vDSO would fault: the clocks go to the kernel.
 * Everywhere else the clocks stay the vDSO's: the hot path gains one
 * predictable branch on a flag that changes only during the first call.
 *
 * Internal to the library. */
#ifndef CPUCYCLES_OSCLOCK_H
#define CPUCYCLES_OSCLOCK_H

#include <sys/time.h>
#include <time.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* 1 when the clocks must be read with the system call. */
extern int cpucycles_osclock_use_syscall;

/* Before the OS clocks' first read (their counters' setup, the perf
 * counters' fallback clock, extend32): where the TSC question was not
 * asked, the flag is set, without asking. */
void cpucycles_osclock_setup(void);

/* The OS clock counters' setup: where the TSC question was not asked yet
 * (a named OS clock), ask it if no seccomp filter can be in the way, else
 * as cpucycles_osclock_setup(). */
void cpucycles_osclock_choose(void);

/* What the kernel says about RDTSC in this process, asked once (the flag
 * follows the answer): allowed (and off x86, where there is no such
 * switch), faults (prctl PR_SET_TSC, PR_TSC_SIGSEGV), or unknown (prctl
 * refused: the TSC counters may fault, and are tried as such). */
enum cpucycles_rdtsc {
  CPUCYCLES_RDTSC_ALLOWED,
  CPUCYCLES_RDTSC_FAULTS,
  CPUCYCLES_RDTSC_UNKNOWN
};
enum cpucycles_rdtsc cpucycles_rdtsc_state(void);

static inline int cpucycles_osclock_gettime(clockid_t clock, struct timespec *t)
{
#if defined(__linux__) && defined(SYS_clock_gettime)
  if (__builtin_expect(__atomic_load_n(&cpucycles_osclock_use_syscall, __ATOMIC_RELAXED), 0))
    return (int) syscall(SYS_clock_gettime, clock, t);
#endif
  return clock_gettime(clock, t);
}

static inline int cpucycles_osclock_gettimeofday(struct timeval *t)
{
#if defined(__linux__) && defined(SYS_gettimeofday)
  if (__builtin_expect(__atomic_load_n(&cpucycles_osclock_use_syscall, __ATOMIC_RELAXED), 0))
    return (int) syscall(SYS_gettimeofday, t, 0);
#endif
  return gettimeofday(t, 0);
}

#endif
