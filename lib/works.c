/* Running code that may fault, with the fault turned into a return value.
 *
 * Counters such as arm64-pmc or amd64-pmcff die with SIGILL or SIGSEGV when
 * the kernel does not let user space read them.  The probe runs their setup
 * and their first reads here; afterwards the library catches nothing
 * (libcpucycles-selection.md).
 *
 * The probe shares the process with the application's threads, so the
 * catcher is careful about what it borrows:
 *
 *  - Only the probing thread's crash signals are caught.  A crash signal
 *    reaching the handler in any other thread (a JVM or a garbage collector
 *    faulting on purpose, a kill from outside) is passed on to the handler
 *    the application had, as the kernel would have delivered it: with its
 *    SA_SIGINFO arguments, its sa_mask, SA_NODEFER, SA_RESETHAND, SA_ONSTACK
 *    and SA_RESTART, or the default action, or nothing for SIG_IGN.  The
 *    library's handler stays installed, so the probe stays armed.
 *
 *  - A crash signal the application blocked in the probing thread and that
 *    is already pending stays blocked, so stays pending.  A fault with its
 *    signal blocked kills the process, and which signal a counter's fault
 *    raises is not known in advance, so while such a signal is pending the
 *    probe does not run the code at all: -1, as for a counter that crashed
 *    (a first call made then ends with default-zero).  Otherwise the crash
 *    signals are unblocked in the probing thread only, for the probe.
 *
 *  - On the way out, a handler is put back only where the library's is still
 *    installed: a handler another thread installed meanwhile stays.
 *
 *  - Every pthread_sigmask() result is checked: when the mask cannot be read
 *    or changed, fn is not run (-1) and nothing is changed. */
#include "counter.h"
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static const int crash_signals[] = { SIGILL, SIGFPE, SIGBUS, SIGSEGV, SIGABRT };
#define CRASH_SIGNALS ((int) (sizeof crash_signals / sizeof crash_signals[0]))

static sigjmp_buf escape;
/* The application's actions, read by the handler in any thread: each is
 * published (release) before the library's handler replaces it. */
static struct sigaction previous[CRASH_SIGNALS];
static int previous_ready[CRASH_SIGNALS];
/* Set from a handler when an SA_RESETHAND handler of the application was
 * delivered to: the disposition to put back is then SIG_DFL. */
static int reset_by_delivery[CRASH_SIGNALS];
/* Armed in the probing thread only: thread-local, so no other thread's
 * signal can take the escape. */
static __thread volatile sig_atomic_t armed;
/* The probing thread's mask as the application set it, and the crash
 * signals sent to the process (kill, sigqueue) that reached the probing
 * thread only because the probe unblocked them: they are sent again once
 * the mask is back, so that they stay pending as they would have. */
static sigset_t application_mask;
static volatile sig_atomic_t caught; /* the signal that stopped fn */
static volatile sig_atomic_t resend[CRASH_SIGNALS];

static int index_of(int sig)
{
  int i;
  for (i = 0; i < CRASH_SIGNALS; i++)
    if (crash_signals[i] == sig) return i;
  return -1;
}

/* Deliver sig to the application's previous disposition, from inside our
 * handler, in the thread the kernel chose. */
static void pass_on(int i, int sig, siginfo_t *info, void *context)
{
  struct sigaction *old = &previous[i];
  struct sigaction dfl;

  if (!__atomic_load_n(&previous_ready[i], __ATOMIC_ACQUIRE)) return;
  if (__atomic_load_n(&reset_by_delivery[i], __ATOMIC_RELAXED) ||
      old->sa_handler == SIG_DFL) {
    /* The default action of every crash signal ends the process.  Put the
     * default back and send the signal again: it is blocked while this
     * handler runs and is delivered when it returns (a fault also happens
     * again, as the instruction is re-executed).  The process is ending,
     * so the handler we leave behind no longer matters. */
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, 0);
    if (info == 0 || info->si_code <= 0) pthread_kill(pthread_self(), sig);
    return;
  }
  if (old->sa_handler == SIG_IGN) {
    /* An ignored signal sent by someone is dropped.  A fault cannot be
     * ignored: the kernel kills the process, and so do we. */
    if (info && info->si_code > 0) {
      memset(&dfl, 0, sizeof dfl);
      dfl.sa_handler = SIG_DFL;
      sigemptyset(&dfl.sa_mask);
      sigaction(sig, &dfl, 0);
    }
    return;
  }

  /* The kernel already blocked old->sa_mask (our action carries it) and,
   * unless SA_NODEFER (ours then has it too), sig itself. */
  if (old->sa_flags & SA_RESETHAND)
    __atomic_store_n(&reset_by_delivery[i], 1, __ATOMIC_RELAXED);
  if (old->sa_flags & SA_SIGINFO)
    old->sa_sigaction(sig, info, context);
  else
    old->sa_handler(sig);
}

static void on_crash(int sig, siginfo_t *info, void *context)
{
  int i = index_of(sig);

  /* SI_USER and SI_QUEUE come from kill() and sigqueue(): someone else's
   * signal, never the counter's fault; raise() (SI_TKILL) from the code
   * under test is its own failure. */
  int sent = info && (info->si_code == SI_USER || info->si_code == SI_QUEUE);

  if (armed) {
    if (!sent) {
      armed = 0;
      caught = sig;
      siglongjmp(escape, 1);
    }
    if (i >= 0 && sigismember(&application_mask, sig)) {
      resend[i] = 1;
      return;
    }
  }
  if (i >= 0) pass_on(i, sig, info, context);
}

static int same_handler(const struct sigaction *a)
{
  return (a->sa_flags & SA_SIGINFO) && a->sa_sigaction == on_crash;
}

static void action_for(const struct sigaction *old, struct sigaction *action)
{
  memset(action, 0, sizeof *action);
  action->sa_sigaction = on_crash;
  /* What the application's handler would have had blocked and how it
   * would have been delivered: the kernel does it for pass_on(). */
  action->sa_mask = old->sa_mask;
  action->sa_flags = SA_SIGINFO;
  if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN)
    action->sa_flags |= old->sa_flags & (SA_ONSTACK | SA_RESTART | SA_NODEFER);
}

/* The kernel's part of a sigset_t: a bit per signal, NSIG - 1 of them.
 * glibc's sigset_t is larger, and sigaction() fills the rest with whatever
 * its own stack held: compare only the kernel's bytes. */
#define KERNEL_SIGSET_BYTES ((NSIG - 1 + 7) / 8)

/* glibc adds SA_RESTORER to every action it installs: an action never set
 * reads back without it, the same action put back with it. */
#ifdef SA_RESTORER
#define LIBC_FLAGS SA_RESTORER
#elif defined(__linux__)
#define LIBC_FLAGS 0x04000000
#else
#define LIBC_FLAGS 0
#endif

static int same_action(const struct sigaction *a, const struct sigaction *b)
{
  size_t n = KERNEL_SIGSET_BYTES < sizeof a->sa_mask ? KERNEL_SIGSET_BYTES
                                                     : sizeof a->sa_mask;
  return a->sa_handler == b->sa_handler &&
         (a->sa_flags & ~LIBC_FLAGS) == (b->sa_flags & ~LIBC_FLAGS) &&
         memcmp(&a->sa_mask, &b->sa_mask, n) == 0;
}

static void publish_previous(int i, const struct sigaction *old)
{
  __atomic_store_n(&previous_ready[i], 0, __ATOMIC_RELEASE);
  previous[i] = *old;
  __atomic_store_n(&previous_ready[i], 1, __ATOMIC_RELEASE);
}

/* previous[] holds what uninstall() left in place: the probe calls the
 * catcher once per counter, and reading every action before replacing it
 * would double the system calls of the first call.  So the action is
 * swapped in one call, and only when the one it replaced is not the one
 * expected (another thread changed it since, or the first time) is it
 * published and ours installed again with that one's mask and flags. */
static int previous_known;

static void install(void)
{
  struct sigaction action, replaced;
  int i;

  for (i = 0; i < CRASH_SIGNALS; i++) {
    __atomic_store_n(&reset_by_delivery[i], 0, __ATOMIC_RELAXED);
    if (!previous_known) {
      if (sigaction(crash_signals[i], 0, &replaced) != 0) {
        memset(&replaced, 0, sizeof replaced);
        replaced.sa_handler = SIG_DFL;
        sigemptyset(&replaced.sa_mask);
      }
      publish_previous(i, &replaced);
    }
    action_for(&previous[i], &action);
    if (sigaction(crash_signals[i], &action, &replaced) != 0) continue;
    if (previous_known && !same_action(&replaced, &previous[i])) {
      publish_previous(i, &replaced);
      action_for(&replaced, &action);
      sigaction(crash_signals[i], &action, 0);
    }
  }
  previous_known = 1;
}

/* Put back what was there, where ours is still installed: swapped in one
 * call; when what came out is not ours (another thread installed a handler
 * meanwhile), that one goes back at once. */
static void uninstall(void)
{
  struct sigaction was, dfl;
  int i;

  for (i = 0; i < CRASH_SIGNALS; i++) {
    if (__atomic_load_n(&reset_by_delivery[i], __ATOMIC_RELAXED)) {
      memset(&dfl, 0, sizeof dfl);
      dfl.sa_handler = SIG_DFL;
      sigemptyset(&dfl.sa_mask);
      if (sigaction(crash_signals[i], &dfl, &was) == 0 && !same_handler(&was))
        sigaction(crash_signals[i], &was, 0);
      previous_known = 0;
      continue;
    }
    if (sigaction(crash_signals[i], &previous[i], &was) != 0) {
      previous_known = 0;
      continue;
    }
    if (!same_handler(&was)) {
      sigaction(crash_signals[i], &was, 0);
      previous_known = 0;
    }
  }
}

/* Runs fn(arg) with the probing thread's crash signals caught.  A crash
 * signal that this thread blocked and that is pending (for the thread or
 * for the process) must stay pending, so it stays blocked; but then a
 * fault raising it would kill the process.  fn is therefore not run while
 * such a signal is pending: -1, as for a counter that crashed. */
int cpucycles_works(void (*fn)(void *), void *arg)
{
  return cpucycles_works_signal(fn, arg, 0);
}

int cpucycles_works_signal(void (*fn)(void *), void *arg, int *stopped_by)
{
  sigset_t saved_mask, pending, unblock;
  volatile int result = -1;
  volatile int i; /* used on both sides of sigsetjmp (gcc -Wclobbered) */
  int blocked = 0;

  if (stopped_by) *stopped_by = 0;

  /* A crash signal pending for this thread or the process is one this
   * thread blocks (unblocked, it would have been delivered), and every
   * other thread too when it is the process's.  So sigpending() is asked
   * only when this thread blocks one: a sandbox refusing rt_sigpending
   * then costs nothing in the usual case. */
  if (pthread_sigmask(SIG_BLOCK, 0, &saved_mask) != 0) return -1;
  sigemptyset(&unblock);
  for (i = 0; i < CRASH_SIGNALS; i++) {
    if (sigismember(&saved_mask, crash_signals[i])) blocked = 1;
    sigaddset(&unblock, crash_signals[i]);
  }
  if (blocked) {
    if (sigpending(&pending) != 0) return -1;
    for (i = 0; i < CRASH_SIGNALS; i++)
      if (sigismember(&pending, crash_signals[i])) return -1;
  }

  for (i = 0; i < CRASH_SIGNALS; i++) resend[i] = 0;
  install();
  /* A fault with its signal blocked kills the process outright: unblock
   * the crash signals in this thread only. */
  if (pthread_sigmask(SIG_UNBLOCK, &unblock, &saved_mask) != 0) {
    uninstall();
    return -1;
  }
  application_mask = saved_mask;

  /* The mask is not saved with the jump buffer (one system call less per
   * counter): it is set back to the application's right below, whichever
   * way fn ended. */
  caught = 0;
  if (sigsetjmp(escape, 0) == 0) {
    armed = 1;
    fn(arg);
    armed = 0;
    result = 0;
  }
  armed = 0;
  if (stopped_by) *stopped_by = caught;

  /* The mask first: a crash signal sent meanwhile by kill() and blocked by
   * the application stays pending instead of meeting the restored
   * handler. */
  pthread_sigmask(SIG_SETMASK, &saved_mask, 0);
  uninstall();
  for (i = 0; i < CRASH_SIGNALS; i++)
    if (resend[i]) kill(getpid(), crash_signals[i]);
  return result;
}
