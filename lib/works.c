/* Running code that may fault, with the fault turned into a return value.
 *
 * Counters such as arm64-pmc or amd64-pmcff die with SIGILL or SIGSEGV when
 * the kernel does not let user space read them.  The probe runs their setup
 * and their first reads here; afterwards the library catches nothing
 * (libcpucycles-selection.md). */
#include "counter.h"
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>

static const int crash_signals[] = { SIGILL, SIGFPE, SIGBUS, SIGSEGV, SIGABRT };
#define CRASH_SIGNALS ((int) (sizeof crash_signals / sizeof crash_signals[0]))

static sigjmp_buf escape;
static struct sigaction previous[CRASH_SIGNALS];
static pthread_t prober;
static volatile sig_atomic_t armed;
static volatile sig_atomic_t caught; /* the signal that stopped fn */

static void restore_handler(int sig)
{
  int i;
  for (i = 0; i < CRASH_SIGNALS; i++)
    if (crash_signals[i] == sig) sigaction(sig, &previous[i], 0);
}

static void on_crash(int sig)
{
  if (armed && pthread_equal(pthread_self(), prober)) {
    armed = 0;
    caught = sig;
    siglongjmp(escape, 1);
  }
  /* Another thread of the program crashed while we were probing.  Give
   * the signal back to the handler it had: returning re-executes the
   * faulting instruction, which now reaches that handler. */
  restore_handler(sig);
}

int cpucycles_works(void (*fn)(void *), void *arg)
{
  return cpucycles_works_signal(fn, arg, 0);
}

int cpucycles_works_signal(void (*fn)(void *), void *arg, int *stopped_by)
{
  struct sigaction action;
  sigset_t crash, saved_mask;
  volatile int result = -1;
  int i;

  sigemptyset(&crash);
  for (i = 0; i < CRASH_SIGNALS; i++) sigaddset(&crash, crash_signals[i]);
  /* A blocked SIGSEGV from a fault kills the process outright: unblock. */
  pthread_sigmask(SIG_UNBLOCK, &crash, &saved_mask);

  memset(&action, 0, sizeof action);
  action.sa_handler = on_crash;
  sigemptyset(&action.sa_mask);
  for (i = 0; i < CRASH_SIGNALS; i++)
    sigaction(crash_signals[i], &action, &previous[i]);

  prober = pthread_self();
  caught = 0;
  if (sigsetjmp(escape, 1) == 0) {
    armed = 1;
    fn(arg);
    armed = 0;
    result = 0;
  }
  armed = 0;
  if (stopped_by) *stopped_by = caught;

  for (i = 0; i < CRASH_SIGNALS; i++)
    sigaction(crash_signals[i], &previous[i], 0);
  pthread_sigmask(SIG_SETMASK, &saved_mask, 0);
  return result;
}
