/* osclock.h: the OS clocks (CLOCK_MONOTONIC, gettimeofday), through the
 * vDSO, or through the system call where the vDSO would fault: on x86 it
 * reads RDTSC when the clocksource is the TSC (or kvm-clock), which a
 * process may have disabled (prctl PR_SET_TSC).  PR_GET_TSC says so in
 * advance; who asks it, and why a named OS clock asks only without a
 * seccomp filter: doc/security.md, "RDTSC disabled" and "Sandboxes".
 * The hot path gains one predictable branch on a flag set only during
 * the first call. */
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

/* Before the OS clocks' first read: where the TSC question was not asked,
 * the flag is set, without asking. */
void cpucycles_osclock_setup(void);

/* The OS clock counters' setup: where the TSC question was not asked yet,
 * ask it if no seccomp filter can be in the way, else as above. */
void cpucycles_osclock_choose(void);

/* What the kernel says about RDTSC here, asked once (the flag follows):
 * allowed (always off x86), faults, or unknown (prctl refused). */
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
