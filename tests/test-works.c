/* Running code that may crash: the crash becomes a return value, and the
 * signal handlers and mask are left as they were. */
#include <config.h>
#include <check.h>
#include "check-run.h"
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "counter.h"
#include "works-once.h"
#include "checked-by.h"
#include "fault.h"
/* ThreadSanitizer delivers signals through its own handler, which calls
 * ours later with its own mask, and emulates default actions. */
#ifdef UNDER_TSAN
#define TSAN_RUNTIME 1
#else
#define TSAN_RUNTIME 0
#endif

/* pthread_sigmask as the library sees it: the real one, or a failure of
 * the n-th call from now when fail_sigmask_call is n.  The library's
 * objects are linked into this program, so this definition is theirs.
 * Under a sanitizer the real one is its interceptor. */
extern int __interceptor_pthread_sigmask(int, const sigset_t *, sigset_t *)
  __attribute__((weak));

static int fail_sigmask_call;

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
  static int (*real)(int, const sigset_t *, sigset_t *);
  if (fail_sigmask_call > 0 && --fail_sigmask_call == 0) return EINVAL;
  if (!real) {
    if (__interceptor_pthread_sigmask)
      real = __interceptor_pthread_sigmask;
    else
      *(void **) &real = dlsym(RTLD_NEXT, "pthread_sigmask");
  }
  if (real) return real(how, set, old);
  /* A static program (the cross tests link statically) has no RTLD_NEXT:
   * sigprocmask is what pthread_sigmask is for the calling thread on
   * Linux, which the tests' masks stay within. */
  return sigprocmask(how, set, old) == 0 ? 0 : errno;
}

static int ran;

static void fine(void *arg)
{
  (void) arg;
  ran++;
}

static void raises(void *arg)
{
  raise(*(int *) arg);
  ran++;
}

static void segfaults(void *arg)
{
  (void) arg;
  fault_segv();
  ran++;
}

#if defined(__x86_64__) || defined(__i386__)
static void illegal_instruction(void *arg)
{
  (void) arg;
  __asm__ volatile("ud2");
  ran++;
}
#endif

static void own_handler(int sig)
{
  (void) sig;
}

START_TEST(normal_function_works)
{
  ran = 0;
  ck_assert_int_eq(cpucycles_works(fine, 0), 0);
  ck_assert_int_eq(ran, 1);
}
END_TEST

START_TEST(each_crash_signal_is_caught)
{
  int signals[] = { SIGILL, SIGFPE, SIGBUS, SIGSEGV, SIGABRT };
  unsigned i;
  for (i = 0; i < sizeof signals / sizeof signals[0]; i++) {
    ran = 0;
    ck_assert_int_eq(cpucycles_works(raises, &signals[i]), -1);
    ck_assert_int_eq(ran, 0);
  }
}
END_TEST

/* Which signal stopped the function, for cpucycles-info --explain. */
START_TEST(the_signal_is_told)
{
  int signals[] = { SIGILL, SIGFPE, SIGBUS, SIGSEGV, SIGABRT };
  unsigned i;
  int sig = -1;
  ck_assert_int_eq(cpucycles_works_signal(fine, 0, &sig), 0);
  ck_assert_int_eq(sig, 0);
  for (i = 0; i < sizeof signals / sizeof signals[0]; i++) {
    ck_assert_int_eq(cpucycles_works_signal(raises, &signals[i], &sig), -1);
    ck_assert_int_eq(sig, signals[i]);
  }
  ck_assert_int_eq(cpucycles_works_signal(segfaults, 0, &sig), -1);
  ck_assert_int_eq(sig, SIGSEGV);
  ck_assert_int_eq(cpucycles_works_signal(fine, 0, &sig), 0);
  ck_assert_int_eq(sig, 0);
  ck_assert_int_eq(cpucycles_works_signal(segfaults, 0, 0), -1);
}
END_TEST

START_TEST(real_fault_is_caught)
{
  ck_assert_int_eq(cpucycles_works(segfaults, 0), -1);
#if defined(__x86_64__) || defined(__i386__)
  ck_assert_int_eq(cpucycles_works(illegal_instruction, 0), -1);
#endif
  /* and again: the catcher is re-armed each time */
  ck_assert_int_eq(cpucycles_works(segfaults, 0), -1);
}
END_TEST

START_TEST(handlers_restored)
{
  struct sigaction mine, seen, bus;
  /* SIGBUS as it was: SIG_DFL, or a sanitizer's handler. */
  sigaction(SIGBUS, 0, &bus);
  memset(&mine, 0, sizeof mine);
  mine.sa_handler = own_handler;
  sigemptyset(&mine.sa_mask);
  sigaction(SIGSEGV, &mine, 0);
  signal(SIGILL, SIG_IGN);
  ck_assert_int_eq(cpucycles_works(segfaults, 0), -1);
  sigaction(SIGSEGV, 0, &seen);
  ck_assert_ptr_eq((void *) seen.sa_handler, (void *) own_handler);
  sigaction(SIGILL, 0, &seen);
  ck_assert_ptr_eq((void *) seen.sa_handler, (void *) SIG_IGN);
  sigaction(SIGBUS, 0, &seen);
  ck_assert_ptr_eq((void *) seen.sa_handler, (void *) bus.sa_handler);
}
END_TEST

START_TEST(mask_restored_and_blocked_fault_still_caught)
{
  sigset_t block, seen;
  sigemptyset(&block);
  sigaddset(&block, SIGSEGV);
  sigaddset(&block, SIGUSR1);
  sigprocmask(SIG_SETMASK, &block, 0);
  ck_assert_int_eq(cpucycles_works(segfaults, 0), -1);
  sigprocmask(SIG_SETMASK, 0, &seen);
  ck_assert(sigismember(&seen, SIGSEGV));
  ck_assert(sigismember(&seen, SIGUSR1));
  ck_assert(!sigismember(&seen, SIGILL));
  ck_assert_int_eq(cpucycles_works(fine, 0), 0);
  sigprocmask(SIG_SETMASK, 0, &seen);
  ck_assert(sigismember(&seen, SIGSEGV));
}
END_TEST

/* ---- a pending crash signal the application blocked ---- */

static volatile sig_atomic_t delivered;
static void counting_handler(int sig)
{
  (void) sig;
  delivered++;
}

START_TEST(pending_blocked_signal_stays_pending)
{
  int signals[] = { SIGSEGV, SIGILL, SIGBUS };
  struct sigaction a;
  sigset_t block, seen;
  unsigned i;

  /* valgrind 3.19's sigpending() does not report a signal sent with kill()
   * that it holds for a thread blocking it: the probe cannot see it. */
  if (RUNNING_ON_VALGRIND) return;
  for (i = 0; i < sizeof signals / sizeof signals[0]; i++) {
    int sig = signals[i];
    memset(&a, 0, sizeof a);
    a.sa_handler = counting_handler;
    sigemptyset(&a.sa_mask);
    ck_assert_int_eq(sigaction(sig, &a, 0), 0);
    sigemptyset(&block);
    sigaddset(&block, sig);
    ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &block, 0), 0);
    delivered = 0;
    ck_assert_int_eq(kill(getpid(), sig), 0); /* pending: blocked */
    /* qemu-user (7.2) does not report it pending either: where sigpending()
     * cannot see such a signal, neither can the probe, and there is
     * nothing to test. */
    ck_assert_int_eq(sigpending(&seen), 0);
    if (!sigismember(&seen, sig)) {
      fprintf(stderr, "sigpending() misses a blocked signal sent with kill(): skipped\n");
      ck_assert_int_eq(pthread_sigmask(SIG_UNBLOCK, &block, 0), 0);
      return;
    }
    ran = 0;
    /* The code is not run (a fault would kill the process): -1. */
    ck_assert_int_eq(cpucycles_works(fine, 0), -1);
    ck_assert_int_eq(ran, 0);
    ck_assert_int_eq(delivered, 0);
    ck_assert_int_eq(sigpending(&seen), 0);
    ck_assert(sigismember(&seen, sig));
    ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, 0, &seen), 0);
    ck_assert(sigismember(&seen, sig));
    /* The application takes it when it wants: exactly once. */
    ck_assert_int_eq(pthread_sigmask(SIG_UNBLOCK, &block, 0), 0);
    ck_assert_int_eq(delivered, 1);
    /* Not pending any more: the probe runs again. */
    ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &block, 0), 0);
    ck_assert_int_eq(cpucycles_works(segfaults, 0), -1);
    ran = 0;
    ck_assert_int_eq(cpucycles_works(fine, 0), 0);
    ck_assert_int_eq(ran, 1);
    ck_assert_int_eq(pthread_sigmask(SIG_UNBLOCK, &block, 0), 0);
  }
}
END_TEST

/* ---- signals of other threads during the probe ---- */

static pthread_t main_thread;
static sigjmp_buf main_escape, other_escape;
static volatile sig_atomic_t stolen, handled_in_other, usr2_blocked, info_ok;

/* The application's SIGSEGV handler: SA_SIGINFO, SA_NODEFER, SIGUSR2 in
 * its mask.  Reached in the probing thread, it would mean the library's
 * catcher was disarmed: note it and leave. */
static void application_action(int sig, siginfo_t *info, void *context)
{
  sigset_t now;
  (void) context;
  if (pthread_equal(pthread_self(), main_thread)) {
    stolen = 1;
    siglongjmp(main_escape, 1);
  }
  handled_in_other++;
  pthread_sigmask(SIG_BLOCK, 0, &now);
  usr2_blocked = sigismember(&now, SIGUSR2) && !sigismember(&now, sig);
  /* A store into a PROT_NONE page: SEGV_ACCERR from Linux, SEGV_MAPERR
   * from qemu-user (ppc64le); either way the kernel's, with the address. */
  info_ok = info != 0 && info->si_signo == sig &&
            (info->si_code == SEGV_ACCERR || info->si_code == SEGV_MAPERR) &&
            info->si_addr == (void *) fault_page();
  siglongjmp(other_escape, 1);
}

static void *faulting_thread(void *arg)
{
  (void) arg;
  if (sigsetjmp(other_escape, 1) == 0)
    fault_segv();
  return 0;
}

/* While armed: another thread faults, then the probed code faults. */
static void other_thread_faults_then_we_do(void *arg)
{
  pthread_t t;
  (void) arg;
  if (pthread_create(&t, 0, faulting_thread, 0) != 0) return;
  pthread_join(t, 0);
  segfaults(0);
}

START_TEST(fault_of_another_thread_reaches_its_handler)
{
  struct sigaction a, seen;
  main_thread = pthread_self();
  memset(&a, 0, sizeof a);
  a.sa_sigaction = application_action;
  a.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&a.sa_mask);
  sigaddset(&a.sa_mask, SIGUSR2);
  ck_assert_int_eq(sigaction(SIGSEGV, &a, 0), 0);
  stolen = 0;
  handled_in_other = 0;
  if (sigsetjmp(main_escape, 1) == 0)
    ck_assert_int_eq(cpucycles_works(other_thread_faults_then_we_do, 0), -1);
  ck_assert_msg(!stolen, "the probe's own fault reached the application's handler");
  ck_assert_int_eq(handled_in_other, 1);
  /* valgrind 3.19 ignores sa_mask for an action with SA_NODEFER, and
   * ThreadSanitizer calls handlers later, with its own mask. */
  if (!RUNNING_ON_VALGRIND && !TSAN_RUNTIME)
    ck_assert_msg(usr2_blocked, "the handler's sa_mask or SA_NODEFER not honoured");
  ck_assert_msg(info_ok, "the handler's siginfo not passed on");
  sigaction(SIGSEGV, 0, &seen);
  ck_assert_ptr_eq((void *) seen.sa_sigaction, (void *) application_action);
  ck_assert_int_eq(seen.sa_flags & (SA_SIGINFO | SA_NODEFER), SA_SIGINFO | SA_NODEFER);
}
END_TEST

static pthread_t other;
static int wake[2];          /* the other thread waits reading it */
static int resethand_calls;

static void resethand_handler(int sig)
{
  (void) sig;
  __atomic_add_fetch(&resethand_calls, 1, __ATOMIC_RELEASE);
}

/* Blocked in read(2), not spinning: ThreadSanitizer delivers a crash
 * signal at once, and in the middle of its own atomic load it would wait
 * for itself in the handler's; valgrind 3.19 asserts, now and then, when a
 * signal meets a thread in sched_yield(). */
static void *waiting_thread(void *arg)
{
  char c;
  (void) arg;
  while (read(wake[0], &c, 1) < 0 && errno == EINTR) {}
  return 0;
}

static void start_waiting_thread(void)
{
  ck_assert_int_eq(pipe(wake), 0);
  ck_assert_int_eq(pthread_create(&other, 0, waiting_thread, 0), 0);
}

/* While armed: send the signal to the other thread, let it finish.  A
 * SIGILL goes to a counting handler: wait (at most 5 s) until it ran, so
 * that the thread does not exit with the signal still pending. */
static void signal_other_thread(void *arg)
{
  int sig = *(int *) arg, waited;
  struct timespec ms = { 0, 1000000 };
  pthread_kill(other, sig);
  if (sig == SIGILL)
    for (waited = 0; waited < 5000 && !__atomic_load_n(&resethand_calls, __ATOMIC_ACQUIRE); waited++)
      nanosleep(&ms, 0);
  if (write(wake[1], "x", 1) != 1) abort();
  pthread_join(other, 0);
  close(wake[0]);
  close(wake[1]);
}

START_TEST(resethand_and_ignored_passed_on)
{
  struct sigaction a, seen;
  int sig;

  /* SA_RESETHAND: the handler runs once and the default comes back, as
   * the kernel would have done it. */
  memset(&a, 0, sizeof a);
  a.sa_handler = resethand_handler;
  a.sa_flags = SA_RESETHAND;
  sigemptyset(&a.sa_mask);
  ck_assert_int_eq(sigaction(SIGILL, &a, 0), 0);
  __atomic_store_n(&resethand_calls, 0, __ATOMIC_RELEASE);
  start_waiting_thread();
  sig = SIGILL;
  ck_assert_int_eq(cpucycles_works(signal_other_thread, &sig), 0);
  ck_assert_int_eq(__atomic_load_n(&resethand_calls, __ATOMIC_ACQUIRE), 1);
  sigaction(SIGILL, 0, &seen);
  ck_assert_ptr_eq((void *) seen.sa_handler, (void *) SIG_DFL);

  /* An ignored signal sent to another thread stays ignored. */
  signal(SIGFPE, SIG_IGN);
  start_waiting_thread();
  sig = SIGFPE;
  ck_assert_int_eq(cpucycles_works(signal_other_thread, &sig), 0);
  sigaction(SIGFPE, 0, &seen);
  ck_assert_ptr_eq((void *) seen.sa_handler, (void *) SIG_IGN);
}
END_TEST

/* SIG_DFL: a signal sent to another thread during the probe ends the
 * process with that signal, as it would have without the library. */
START_TEST(default_action_passed_on)
{
  struct rlimit no_core = { 0, 0 };
  pid_t pid;
  int status, sig = SIGBUS;

  /* valgrind 3.19 hangs, now and then, ending a process whose second
   * thread re-raises a signal with the default action from its handler
   * (a ten-line program without the library does it too); ThreadSanitizer
   * emulates default actions itself. */
  if (RUNNING_ON_VALGRIND || TSAN_RUNTIME) return;
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    setrlimit(RLIMIT_CORE, &no_core);
    signal(SIGBUS, SIG_DFL);
    if (pipe(wake) != 0 || pthread_create(&other, 0, waiting_thread, 0) != 0) _exit(2);
    cpucycles_works(signal_other_thread, &sig);
    _exit(0);
  }
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS,
                "the child survived a SIGBUS with the default action");
}
END_TEST

/* ---- a handler installed while the probe runs ---- */

static void installs_handler(void *arg)
{
  struct sigaction a;
  (void) arg;
  memset(&a, 0, sizeof a);
  a.sa_handler = counting_handler;
  sigemptyset(&a.sa_mask);
  sigaction(SIGSEGV, &a, 0);
  sigaction(SIGBUS, &a, 0);
}

START_TEST(handler_installed_meanwhile_stays)
{
  struct sigaction seen;
  signal(SIGSEGV, own_handler);
  ck_assert_int_eq(cpucycles_works(installs_handler, 0), 0);
  sigaction(SIGSEGV, 0, &seen);
  ck_assert_ptr_eq((void *) seen.sa_handler, (void *) counting_handler);
  sigaction(SIGBUS, 0, &seen);
  ck_assert_ptr_eq((void *) seen.sa_handler, (void *) counting_handler);
}
END_TEST

/* ---- pthread_sigmask failing ---- */

START_TEST(mask_failure_runs_nothing_changes_nothing)
{
  sigset_t block, seen;
  struct sigaction before, after;
  int call;

  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  sigaddset(&block, SIGSEGV);
  ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, &block, 0), 0);
  signal(SIGSEGV, own_handler);
  sigaction(SIGSEGV, 0, &before);
  /* The first call unblocks the crash signals (and reads the mask). */
  for (call = 1; call <= 1; call++) {
    ran = 0;
    fail_sigmask_call = call;
    ck_assert_int_eq(cpucycles_works(fine, 0), -1);
    fail_sigmask_call = 0;
    ck_assert_int_eq(ran, 0);
    ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, 0, &seen), 0);
    ck_assert(sigismember(&seen, SIGUSR1));
    ck_assert(sigismember(&seen, SIGSEGV));
    ck_assert(!sigismember(&seen, SIGUSR2));
    ck_assert(!sigismember(&seen, SIGILL));
    sigaction(SIGSEGV, 0, &after);
    ck_assert_ptr_eq((void *) after.sa_handler, (void *) before.sa_handler);
  }
  ck_assert_int_eq(cpucycles_works(fine, 0), 0);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("works");
  TCase *t = tcase_create("crash signals");
  tcase_set_timeout(t, 60); /* valgrind runs threads one at a time */
  tcase_add_test(t, normal_function_works);
  tcase_add_test(t, each_crash_signal_is_caught);
  tcase_add_test(t, real_fault_is_caught);
  tcase_add_test(t, the_signal_is_told);
  tcase_add_test(t, handlers_restored);
  tcase_add_test(t, mask_restored_and_blocked_fault_still_caught);
  tcase_add_test(t, pending_blocked_signal_stays_pending);
  tcase_add_test(t, fault_of_another_thread_reaches_its_handler);
  tcase_add_test(t, resethand_and_ignored_passed_on);
  tcase_add_test(t, default_action_passed_on);
  tcase_add_test(t, handler_installed_meanwhile_stays);
  tcase_add_test(t, mask_failure_runs_nothing_changes_nothing);
  suite_add_tcase(s, t);
  return run_suite(s);
}
