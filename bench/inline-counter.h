/* inline-counter.h: the cheapest user-readable counter of the ISA, read
 * inline, as the benchmarks' baseline: the instruction the library's
 * unscaled counter executes (x86-64 RDTSC for amd64-tsc, arm64
 * CNTVCT_EL0 for arm64-vct), plain and fenced.  INLINE_COUNTER is not
 * defined elsewhere. */
#ifndef CPUCYCLES_BENCH_INLINE_COUNTER_H
#define CPUCYCLES_BENCH_INLINE_COUNTER_H

#if defined(__x86_64__)
#define INLINE_COUNTER "rdtsc"
#define INLINE_COUNTER_FENCED "lfence; rdtsc"
#define INLINE_COUNTER_LIBRARY_NAME "amd64-tsc"
static inline long long inline_counter(void)
{
  unsigned long long lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return (long long) ((hi << 32) | lo);
}
static inline long long inline_counter_fenced(void)
{
  unsigned long long lo, hi;
  __asm__ volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
  return (long long) ((hi << 32) | lo);
}
#elif defined(__aarch64__)
#define INLINE_COUNTER "mrs cntvct_el0"
#define INLINE_COUNTER_FENCED "isb; mrs cntvct_el0"
#define INLINE_COUNTER_LIBRARY_NAME "arm64-vct"
static inline long long inline_counter(void)
{
  long long v;
  __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
}
static inline long long inline_counter_fenced(void)
{
  long long v;
  __asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
  return v;
}
#endif

#endif
