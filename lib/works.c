/* Running code that may fault, with the fault turned into a return value:
 * only for what nobody can ask about (COUNTER_TRIES, or a question the
 * kernel did not answer).  The probe arms once, at the first such counter,
 * and disarms at its end.  A small net, not an imitation of the kernel:
 * doc/security.md, "Signals during the probe", says what it does with
 * every other crash signal, with another copy's handler (MARK) and with a
 * handler installed meanwhile. */
#include "counter.h"
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>

static const int crash_signals[] = { SIGILL, SIGFPE, SIGBUS, SIGSEGV, SIGABRT };
#define CRASH_SIGNALS ((int) (sizeof crash_signals / sizeof crash_signals[0]))

/* Blocked by the library's action besides the program's mask: how copies
 * of the library recognise each other's handler.  A program's SA_SIGINFO
 * handler that blocks it too (sigfillset) is taken for one: the counters
 * that may fault are then skipped, never run unprotected. */
#ifdef SIGRTMAX
#define MARK SIGRTMAX
#else
#define MARK SIGSYS /* no real-time signals (macOS) */
#endif

/* One probe at a time, under the library's init lock.  The handler, in
 * any thread, reads previous (written before sigaction installs the
 * library's action, which orders it), armed and prober (atomics). */
static struct {
  sigjmp_buf escape;
  struct sigaction previous[CRASH_SIGNALS]; /* the program's actions */
  volatile sig_atomic_t reset[CRASH_SIGNALS]; /* SA_RESETHAND delivered */
  int installed;                            /* bit i: signal i is ours */
  sigset_t program_mask, trial_mask;
  pthread_t prober;
  volatile sig_atomic_t armed, caught;
} catcher;

static const struct sigaction default_action; /* SIG_DFL: all zero */

/* The program's handler of signal i, for a signal that is not a trial's. */
static void chain(int i, int sig, siginfo_t *info, void *context)
{
  const struct sigaction *old = &catcher.previous[i];
  if (catcher.reset[i] || old->sa_handler == SIG_DFL) {
    sigaction(sig, &default_action, 0);
    raise(sig); /* blocked until this handler returns, then fatal */
  } else if (old->sa_handler == SIG_IGN) {
    if (info && info->si_code > 0) sigaction(sig, &default_action, 0); /* a fault */
  } else {
    if (old->sa_flags & SA_RESETHAND) catcher.reset[i] = 1;
    if (old->sa_flags & SA_SIGINFO) old->sa_sigaction(sig, info, context);
    else old->sa_handler(sig);
  }
}

static void on_crash(int sig, siginfo_t *info, void *context)
{
  pthread_t prober;
  int i, sent = info && (info->si_code == SI_USER || info->si_code == SI_QUEUE);
  __atomic_load(&catcher.prober, &prober, __ATOMIC_RELAXED);
  if (!sent && __atomic_load_n(&catcher.armed, __ATOMIC_SEQ_CST) &&
      pthread_equal(pthread_self(), prober)) {
    __atomic_store_n(&catcher.armed, 0, __ATOMIC_SEQ_CST);
    catcher.caught = sig;
    siglongjmp(catcher.escape, 1);
  }
  for (i = 0; i < CRASH_SIGNALS; i++)
    if (crash_signals[i] == sig) chain(i, sig, info, context);
}

static int is_ours(const struct sigaction *a)
{
  return (a->sa_flags & SA_SIGINFO) && a->sa_sigaction == on_crash;
}

static int is_a_catcher(const struct sigaction *a)
{
  return (a->sa_flags & SA_SIGINFO) && sigismember(&a->sa_mask, MARK) == 1;
}

/* Put back the actions installed; one swap each, no retry. */
static void uninstall(void)
{
  struct sigaction was;
  int i;
  for (i = 0; i < CRASH_SIGNALS; i++) {
    const struct sigaction *back = catcher.reset[i] ? &default_action : &catcher.previous[i];
    if ((catcher.installed & (1 << i)) && sigaction(crash_signals[i], back, &was) == 0
        && !is_ours(&was))
      sigaction(crash_signals[i], &was, 0); /* not ours any more: it stays */
  }
  catcher.installed = 0;
}

static int problem(struct catch_status *status, enum catch_problem p, int sig)
{
  if (status) {
    status->problem = p;
    status->signal = sig;
  }
  return -1;
}

static int install(struct catch_status *status)
{
  struct sigaction ours, was;
  int i;
  for (i = 0; i < CRASH_SIGNALS; i++) {
    struct sigaction *old = &catcher.previous[i];
    catcher.reset[i] = 0;
    if (sigaction(crash_signals[i], 0, old) != 0)
      return problem(status, CATCH_ACTION_REFUSED, 0);
    if (is_a_catcher(old)) return problem(status, CATCH_REPLACED, crash_signals[i]);
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_crash;
    ours.sa_mask = old->sa_mask;
    sigaddset(&ours.sa_mask, MARK);
    ours.sa_flags = SA_SIGINFO;
    if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN)
      ours.sa_flags |= old->sa_flags & (SA_ONSTACK | SA_RESTART | SA_NODEFER);
    if (sigaction(crash_signals[i], &ours, &was) != 0)
      return problem(status, CATCH_ACTION_REFUSED, 0);
    catcher.installed |= 1 << i;
    if (was.sa_handler != old->sa_handler) { /* replaced meanwhile */
      catcher.previous[i] = was;
      return problem(status, CATCH_REPLACED, crash_signals[i]);
    }
  }
  return 0;
}

int cpucycles_catch_arm(struct catch_status *status)
{
  sigset_t pending;
  int i, blocked = 0;
  pthread_t self = pthread_self();

  problem(status, CATCH_READY, 0);
  if (pthread_sigmask(SIG_BLOCK, 0, &catcher.program_mask) != 0)
    return problem(status, CATCH_MASK_REFUSED, 0);
  catcher.trial_mask = catcher.program_mask; /* less the crash signals */
  for (i = 0; i < CRASH_SIGNALS; i++) {
    blocked |= sigismember(&catcher.program_mask, crash_signals[i]) == 1;
    sigdelset(&catcher.trial_mask, crash_signals[i]);
  }
  /* Only a blocked crash signal can be pending: rt_sigpending (which a
   * sandbox may refuse) is asked only then. */
  if (blocked) {
    if (sigpending(&pending) != 0) return problem(status, CATCH_PENDING_UNKNOWN, 0);
    for (i = 0; i < CRASH_SIGNALS; i++)
      if (sigismember(&pending, crash_signals[i]) == 1)
        return problem(status, CATCH_PENDING, crash_signals[i]);
  }
  __atomic_store(&catcher.prober, &self, __ATOMIC_RELAXED);
  if (install(status) != 0) {
    uninstall();
    return -1;
  }
  if (pthread_sigmask(SIG_SETMASK, &catcher.trial_mask, 0) != 0) {
    uninstall();
    return problem(status, CATCH_MASK_REFUSED, 0);
  }
  return 0;
}

int cpucycles_catch_try(void (*fn)(void *), void *arg, int *stopped_by,
                        struct catch_status *status)
{
  struct sigaction now;
  int i;

  if (stopped_by) *stopped_by = 0;
  problem(status, CATCH_READY, 0);
  for (i = 0; i < CRASH_SIGNALS; i++)
    if (sigaction(crash_signals[i], 0, &now) != 0 || !is_ours(&now))
      return problem(status, CATCH_REPLACED, crash_signals[i]);
  catcher.caught = 0;
  /* The mask is not saved with the jump (a system call less per trial):
   * after a fault it is set back below. */
  if (sigsetjmp(catcher.escape, 0) == 0) {
    __atomic_store_n(&catcher.armed, 1, __ATOMIC_SEQ_CST);
    fn(arg);
    __atomic_store_n(&catcher.armed, 0, __ATOMIC_SEQ_CST);
    return 0;
  }
  if (stopped_by) *stopped_by = catcher.caught;
  pthread_sigmask(SIG_SETMASK, &catcher.trial_mask, 0);
  return -1;
}

void cpucycles_catch_disarm(void)
{
  /* The mask first: a crash signal the program blocked, sent meanwhile,
   * stays pending instead of meeting the program's handler. */
  pthread_sigmask(SIG_SETMASK, &catcher.program_mask, 0);
  uninstall();
}
