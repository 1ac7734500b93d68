/* Running code that may fault, with the fault turned into a return value.
 *
 * The rule: ask, and catch only what cannot be asked.  Where the kernel can
 * say whether user mode may run a counter (PR_GET_TSC, the rdpmc switch,
 * the perf page, kernel.perf_user_access), the counter's setup asks, and
 * the probe runs it with no handler installed and no mask changed
 * (COUNTER_ASKS in counter.h).  What nobody can predict (arm64-pmc, the
 * arm32, mips64, s390x and sparc64 counters, a question the kernel could
 * not answer) is tried here: the catcher is armed once for the probe, only
 * when such a counter is to be tried, and disarmed when the probe ends;
 * afterwards the library catches nothing (libcpucycles-selection.md).
 *
 * The probe shares the process with the application's threads, so the
 * catcher is careful about what it borrows:
 *
 *  - Only the probing thread's crash signals, during a trial, are caught.
 *    A crash signal reaching the handler anywhere else (another thread, a
 *    JVM or a garbage collector faulting on purpose, a kill from outside)
 *    is passed on to the handler the application had, as the kernel would
 *    have delivered it: with its SA_SIGINFO arguments, its sa_mask,
 *    SA_NODEFER, SA_RESETHAND, SA_ONSTACK and SA_RESTART, or the default
 *    action, or nothing for SIG_IGN.
 *
 *  - A crash signal the application blocked in the probing thread and that
 *    is already pending stays blocked, so stays pending.  A fault with its
 *    signal blocked kills the process, and which signal a counter's fault
 *    raises is not known in advance, so while such a signal is pending the
 *    catcher does not arm: the counters that may fault are not tried (each
 *    with its reason), and the others are.  Otherwise the crash signals
 *    are unblocked in the probing thread only, for the probe.
 *
 *  - Before each trial the handlers are checked: where the application
 *    replaced one since the catcher was armed, the trial is not run (its
 *    fault would reach the application's handler).
 *
 *  - On the way out, a handler is put back only where the library's is
 *    still installed.  Where another handler replaced it, the catcher
 *    waits a little (at most DISARM_WAIT_MS) for its own to come back:
 *    another copy of this library in the process (a static copy inside a
 *    plugin) that armed after it puts it back when it disarms, and only
 *    then can the application's action go back in place; a handler the
 *    application installed stays.
 *
 *  - Every pthread_sigmask() and sigaction() result is checked: when the
 *    mask or the actions cannot be read or changed, nothing is armed and
 *    nothing is left changed. */
#include "counter.h"
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const int crash_signals[] = { SIGILL, SIGFPE, SIGBUS, SIGSEGV, SIGABRT };
#define CRASH_SIGNALS ((int) (sizeof crash_signals / sizeof crash_signals[0]))

/* How long disarming waits for a handler of another copy of the library
 * to give the library's back, in steps of a millisecond. */
#define DISARM_WAIT_MS 100

static sigjmp_buf escape;
/* The application's actions, read by the handler in any thread: each is
 * published (release) before the library's handler replaces it. */
static struct sigaction previous[CRASH_SIGNALS];
static int previous_ready[CRASH_SIGNALS];
/* Set from a handler when an SA_RESETHAND handler of the application was
 * delivered to: the disposition to put back is then SIG_DFL. */
static int reset_by_delivery[CRASH_SIGNALS];
/* Which of the actions the catcher installed. */
static int installed[CRASH_SIGNALS];
/* A trial is running in the probing thread: set and cleared by that
 * thread only, read by the handler in any thread (atomics: another
 * thread's handler reads them while the probe runs), which takes the
 * escape only in the probing thread.  No thread-local: a handler touching
 * one of a dlopen'ed library may call into the dynamic linker. */
static volatile sig_atomic_t armed;
static pthread_t prober;

static void set_armed(int on)
{
  __atomic_store_n(&armed, on, __ATOMIC_SEQ_CST);
}

/* In a handler: whether the signal is the probing thread's, in a trial. */
static int in_trial(void)
{
  pthread_t p;
  if (!__atomic_load_n(&armed, __ATOMIC_SEQ_CST)) return 0;
  __atomic_load(&prober, &p, __ATOMIC_RELAXED);
  return pthread_equal(pthread_self(), p);
}
/* The probing thread's mask as the application set it, and the crash
 * signals sent to the process (kill, sigqueue) that reached the probing
 * thread only because the probe unblocked them: they are sent again once
 * the mask is back, so that they stay pending as they would have. */
static sigset_t application_mask;
static sigset_t crash_set;
static volatile sig_atomic_t caught; /* the signal that stopped fn */
static volatile sig_atomic_t resend[CRASH_SIGNALS];

static int index_of(int sig)
{
  int i;
  for (i = 0; i < CRASH_SIGNALS; i++)
    if (crash_signals[i] == sig) return i;
  return -1;
}

static void set_default(int sig, struct sigaction *was)
{
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, was);
}

/* Deliver sig to the application's previous disposition, from inside our
 * handler, in the thread the kernel chose. */
static void pass_on(int i, int sig, siginfo_t *info, void *context)
{
  struct sigaction *old = &previous[i];

  if (!__atomic_load_n(&previous_ready[i], __ATOMIC_ACQUIRE)) return;
  if (__atomic_load_n(&reset_by_delivery[i], __ATOMIC_RELAXED) ||
      old->sa_handler == SIG_DFL) {
    /* The default action of every crash signal ends the process.  Put the
     * default back and send the signal again: it is blocked while this
     * handler runs and is delivered when it returns (a fault also happens
     * again, as the instruction is re-executed).  The process is ending,
     * so the handler we leave behind no longer matters. */
    set_default(sig, 0);
    if (info == 0 || info->si_code <= 0) pthread_kill(pthread_self(), sig);
    return;
  }
  if (old->sa_handler == SIG_IGN) {
    /* An ignored signal sent by someone is dropped.  A fault cannot be
     * ignored: the kernel kills the process, and so do we. */
    if (info && info->si_code > 0) set_default(sig, 0);
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

  if (in_trial()) {
    if (!sent) {
      set_armed(0);
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

static void publish_previous(int i, const struct sigaction *old)
{
  __atomic_store_n(&previous_ready[i], 0, __ATOMIC_RELEASE);
  previous[i] = *old;
  __atomic_store_n(&previous_ready[i], 1, __ATOMIC_RELEASE);
}

/* At most a millisecond: an interrupted sleep is not resumed, so that a
 * filter answering EINTR to every sleep cannot make the wait endless. */
static void pause_a_millisecond(void)
{
  struct timespec t = { 0, 1000000 };
  nanosleep(&t, 0);
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

/* Put back the application's action of crash signal i where ours is still
 * installed: swapped in one call.  When what came out is not ours, it goes
 * back at once, and the catcher waits for ours to come back, a millisecond
 * at a time out of *budget (shared by the signals of one disarm): another
 * copy of the library that armed after this one gives ours back when it
 * disarms.  A handler the application installed stays. */
static void put_back(int i, int *budget)
{
  struct sigaction was;

  for (;;) {
    if (__atomic_load_n(&reset_by_delivery[i], __ATOMIC_RELAXED))
      set_default(crash_signals[i], &was);
    else if (sigaction(crash_signals[i], &previous[i], &was) != 0)
      return;
    if (same_handler(&was)) return;
    sigaction(crash_signals[i], &was, 0);
    for (;;) {
      if (*budget <= 0) return;
      --*budget;
      pause_a_millisecond();
      if (sigaction(crash_signals[i], 0, &was) == 0 && same_handler(&was)) break;
    }
  }
}

static void uninstall(void)
{
  int i, budget = DISARM_WAIT_MS;
  for (i = 0; i < CRASH_SIGNALS; i++) {
    if (installed[i]) put_back(i, &budget);
    installed[i] = 0;
  }
}

static int install(void)
{
  struct sigaction action, old;
  int i;

  for (i = 0; i < CRASH_SIGNALS; i++) {
    __atomic_store_n(&reset_by_delivery[i], 0, __ATOMIC_RELAXED);
    if (sigaction(crash_signals[i], 0, &old) != 0) return -1;
    publish_previous(i, &old);
    action_for(&old, &action);
    if (sigaction(crash_signals[i], &action, &old) != 0) return -1;
    installed[i] = 1;
    if (!same_handler(&old) && !same_action(&old, &previous[i])) {
      /* replaced between the two calls: pass on to that one instead */
      publish_previous(i, &old);
      action_for(&old, &action);
      sigaction(crash_signals[i], &action, 0);
    }
  }
  return 0;
}

static int problem(struct catch_status *status, enum catch_problem p, int sig)
{
  if (status) {
    status->problem = p;
    status->signal = sig;
  }
  return -1;
}

int cpucycles_catch_arm(struct catch_status *status)
{
  sigset_t saved_mask, pending;
  int i, blocked = 0;

  problem(status, CATCH_READY, 0);
  /* A crash signal pending for this thread or the process is one this
   * thread blocks (unblocked, it would have been delivered), and every
   * other thread too when it is the process's.  So sigpending() is asked
   * only when this thread blocks one: a sandbox refusing rt_sigpending
   * then costs nothing in the usual case. */
  if (pthread_sigmask(SIG_BLOCK, 0, &saved_mask) != 0)
    return problem(status, CATCH_MASK_REFUSED, 0);
  sigemptyset(&crash_set);
  for (i = 0; i < CRASH_SIGNALS; i++) {
    if (sigismember(&saved_mask, crash_signals[i])) blocked = 1;
    sigaddset(&crash_set, crash_signals[i]);
  }
  if (blocked) {
    if (sigpending(&pending) != 0)
      return problem(status, CATCH_PENDING_UNKNOWN, 0);
    for (i = 0; i < CRASH_SIGNALS; i++)
      if (sigismember(&pending, crash_signals[i]))
        return problem(status, CATCH_PENDING, crash_signals[i]);
  }

  for (i = 0; i < CRASH_SIGNALS; i++) resend[i] = 0;
  application_mask = saved_mask;
  {
    pthread_t self = pthread_self();
    __atomic_store(&prober, &self, __ATOMIC_RELAXED);
  }
  if (install() != 0) {
    uninstall();
    return problem(status, CATCH_ACTION_REFUSED, 0);
  }
  /* A fault with its signal blocked kills the process outright: unblock
   * the crash signals in this thread only. */
  if (pthread_sigmask(SIG_UNBLOCK, &crash_set, 0) != 0) {
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
    if (sigaction(crash_signals[i], 0, &now) != 0 || !same_handler(&now))
      return problem(status, CATCH_REPLACED, crash_signals[i]);

  caught = 0;
  /* The mask is not saved with the jump buffer (a system call less per
   * trial): after a caught fault the kernel left its signal blocked, and
   * it is unblocked again below. */
  if (sigsetjmp(escape, 0) == 0) {
    set_armed(1);
    fn(arg);
    set_armed(0);
    return 0;
  }
  set_armed(0);
  if (stopped_by) *stopped_by = caught;
  pthread_sigmask(SIG_UNBLOCK, &crash_set, 0);
  return -1;
}

void cpucycles_catch_disarm(void)
{
  int i;
  /* The mask first: a crash signal sent meanwhile by kill() and blocked by
   * the application stays pending instead of meeting the restored
   * handler. */
  pthread_sigmask(SIG_SETMASK, &application_mask, 0);
  uninstall();
  for (i = 0; i < CRASH_SIGNALS; i++)
    if (resend[i]) kill(getpid(), crash_signals[i]);
}
