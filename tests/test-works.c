/* Running code that may crash: the crash becomes a return value, and the
 * signal handlers and mask are left as they were. */
#include <config.h>
#include <check.h>
#include "check-run.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "counter.h"

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
  volatile int *nowhere = arg;
  *nowhere = 1;
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

int main(void)
{
  Suite *s = suite_create("works");
  TCase *t = tcase_create("crash signals");
  tcase_add_test(t, normal_function_works);
  tcase_add_test(t, each_crash_signal_is_caught);
  tcase_add_test(t, real_fault_is_caught);
  tcase_add_test(t, the_signal_is_told);
  tcase_add_test(t, handlers_restored);
  tcase_add_test(t, mask_restored_and_blocked_fault_still_caught);
  suite_add_tcase(s, t);
  return run_suite(s);
}
