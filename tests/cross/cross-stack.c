/* cross-stack: the first call from a thread with a small stack, under
 * qemu-user for each triplet of tests/check-cross.sh, as tests/test-stack.c
 * makes it natively (tests/cross/small-stack.h): the thread must not
 * overflow its max(16384, PTHREAD_STACK_MIN) bytes, and what the first
 * call takes of them stays under doc/security.md's bound plus one caught
 * signal's frame (a counter that faults under the emulator costs one).
 *
 *   cross-stack          the first call untraced
 *   cross-stack traced   the same, after cpucycles_tracesetup()
 *
 * One process makes one first call, so check-cross.sh runs it twice.
 * Prints "cross-stack: ..." last; exits 1 when the bound is passed. */
#include <stdio.h>
#include <string.h>
#include "small-stack.h"

int main(int argc, char **argv)
{
  int traced = argc > 1 && strcmp(argv[1], "traced") == 0;
  size_t used = 0, frame = 0;
  const char *answer = 0;
  int ok;

  setvbuf(stdout, 0, _IONBF, 0);
  if (small_stack_signal_frame(&frame) != 0
      || small_stack_measure(traced, &used, &answer) != 0 || !answer) {
    printf("cross-stack: FAIL: no thread with a %zu-byte stack\n", small_stack_size());
    return 1;
  }
  ok = used <= SMALL_STACK_BOUND + frame;
  printf("cross-stack: %s: %s first call on a %zu-byte stack: %s, %zu bytes used "
         "(bound %d + a caught signal's %zu)\n", ok ? "ok" : "FAIL",
         traced ? "traced" : "untraced", small_stack_size(), answer, used,
         SMALL_STACK_BOUND, frame);
  return ok ? 0 : 1;
}
