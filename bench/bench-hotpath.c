/* bench-hotpath: what a call of cpucycles() costs next to the counter's
 * own instruction inlined, measured in the same run.
 *
 * Both figures are the median difference between back-to-back reads, the
 * way a caller measures an empty function.  Target: cpucycles() within 5%
 * of the inline instruction, i.e. the indirect call adds (almost) nothing.
 * The baseline exists where the ISA has a user-readable counter that the
 * library would pick unscaled (x86-64 RDTSC, arm64 CNTVCT_EL0 in ticks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpucycles.h"
#include "inline-counter.h"
#include "median.h"

#define ROUNDS 21

#ifdef INLINE_COUNTER
#define BASELINE "inline " INLINE_COUNTER
#define BASELINE_COUNTER INLINE_COUNTER_LIBRARY_NAME
static inline long long raw(void)
{
  return inline_counter();
}
#endif

int main(void)
{
  static long long t[READS];
  long long lib[ROUNDS], base[ROUNDS];
  int r, i;

  cpucycles(); /* the probe, outside the measurement */
  printf("implementation %s\n", cpucycles_implementation());
  for (r = 0; r < ROUNDS; r++) {
    for (i = 0; i < READS; i++) t[i] = cpucycles();
    lib[r] = median_step(t);
#ifdef BASELINE
    for (i = 0; i < READS; i++) t[i] = raw();
    base[r] = median_step(t);
#else
    base[r] = 0;
#endif
  }
  qsort(lib, ROUNDS, sizeof lib[0], compare);
  qsort(base, ROUNDS, sizeof base[0], compare);
  printf("cpucycles() median back-to-back difference: %lld\n", lib[ROUNDS / 2]);
#ifdef BASELINE
  printf("baseline (%s) median back-to-back difference: %lld\n", BASELINE, base[ROUNDS / 2]);
  if (strcmp(cpucycles_implementation(), BASELINE_COUNTER) != 0 &&
      strcmp(cpucycles_implementation(), BASELINE_COUNTER "asm") != 0)
    printf("note: the library chose %s, not %s: the two count different things\n",
           cpucycles_implementation(), BASELINE_COUNTER);
  if (base[ROUNDS / 2] > 0)
    printf("ratio %.3f (target <= 1.05)\n", (double) lib[ROUNDS / 2] / (double) base[ROUNDS / 2]);
#else
  printf("baseline: none on this ISA\n");
#endif
  return 0;
}
