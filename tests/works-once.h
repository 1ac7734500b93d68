/* works-once.h: the catcher armed, tried once and disarmed, for tests
 * that try a function or two (the probe arms once for all its trials:
 * lib/works.c).  Include after counter.h. */
#ifndef CPUCYCLES_TESTS_WORKS_ONCE_H
#define CPUCYCLES_TESTS_WORKS_ONCE_H

/* Arm, try once, disarm: SIGILL, SIGFPE, SIGBUS, SIGSEGV and SIGABRT
 * caught in the calling thread only; on Windows, the corresponding
 * exceptions.  As cpucycles_catch_try, and -1 when the catcher could not
 * be armed. */
static inline int cpucycles_works_signal(void (*fn)(void *), void *arg,
                                         int *stopped_by)
{
  int result;
  if (stopped_by) *stopped_by = 0;
  if (cpucycles_catch_arm(0) != 0) return -1;
  result = cpucycles_catch_try(fn, arg, stopped_by, 0);
  cpucycles_catch_disarm();
  return result;
}

static inline int cpucycles_works(void (*fn)(void *), void *arg)
{
  return cpucycles_works_signal(fn, arg, 0);
}

#endif
