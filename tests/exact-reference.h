/* floor(ticks * num / den) modulo 2^64, the slow way, for checking the
 * library's exact scaling (lib/adapters.h): the 128-bit product by shift
 * and add, then long division one bit at a time (den < 2^63).  Shared by
 * test-adapters and the cross matrix's cross-smoke. */
#ifndef CPUCYCLES_EXACT_REFERENCE_H
#define CPUCYCLES_EXACT_REFERENCE_H

static unsigned long long reference(unsigned long long ticks, unsigned long long num,
                                    unsigned long long den)
{
  unsigned long long hi = 0, lo = 0, quotient = 0, r = 0;
  int i;
  for (i = 63; i >= 0; i--) {
    hi = hi << 1 | lo >> 63;
    lo <<= 1;
    if (num >> i & 1) {
      lo += ticks;
      hi += lo < ticks;
    }
  }
  for (i = 127; i >= 0; i--) {
    r = r << 1 | ((i >= 64 ? hi >> (i - 64) : lo >> i) & 1);
    quotient <<= 1;
    if (r >= den) {
      r -= den;
      quotient |= 1;
    }
  }
  return quotient;
}

#endif
