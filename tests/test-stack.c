/* The first call from a thread whose stack is small: thread pools and
 * runtimes give their threads PTHREAD_STACK_MIN (16 KiB on x86-64), and
 * the first call runs on the caller's stack.  The call must not overflow
 * it, traced or not, and its own use (the high-water mark over a baseline
 * thread that makes no first call, tests/cross/small-stack.h) stays under
 * the bound doc/security.md states.
 *
 * Check runs each test in its own process, so each makes the first call. */
#include <config.h>
#include <check.h>
#include "check-run.h"
#include <stdio.h>
#include <stdlib.h>
#include "cpucycles.h"
#include "checked-by.h"
#include "cross/small-stack.h"

static void first_call_on_small_stack(int traced)
{
  size_t used = 0, frame = 0;
  const char *answer = 0;

#if defined(UNDER_SANITIZER)
  /* the sanitizers' instrumentation grows every frame and keeps stacks
   * of its own: what they would measure is theirs */
  fprintf(stderr, "under a sanitizer: not checked\n");
  return;
#endif
  if (RUNNING_ON_VALGRIND) {
    /* memcheck marks a dead thread's stack undefined: the pattern cannot
     * be read back */
    fprintf(stderr, "under valgrind: not checked\n");
    return;
  }
  ck_assert_int_eq(small_stack_signal_frame(&frame), 0);
  ck_assert_int_eq(small_stack_measure(traced, &used, &answer), 0);
  ck_assert_ptr_nonnull(answer);
  fprintf(stderr, "%s first call on a %zu-byte stack: %s, %zu bytes used "
          "(bound %d + a caught signal's %zu)\n",
          traced ? "traced" : "untraced", small_stack_size(), answer,
          used, SMALL_STACK_BOUND, frame);
  ck_assert_uint_le(used, SMALL_STACK_BOUND + frame);
}

START_TEST(untraced_first_call_fits_a_small_stack)
{
  first_call_on_small_stack(0);
}
END_TEST

START_TEST(traced_first_call_fits_a_small_stack)
{
  /* the trace's lines go to stdout: something waiting in its buffer is
   * flushed first, on the small stack too */
  printf("before the traced first call\n");
  first_call_on_small_stack(1);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("stack");
  TCase *t = tcase_create("first call");

  unsetenv("CPUCYCLES_COUNTER");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, untraced_first_call_fits_a_small_stack);
  tcase_add_test(t, traced_first_call_fits_a_small_stack);
  suite_add_tcase(s, t);
  return run_suite(s);
}
