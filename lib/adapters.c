/* Scaling and 32-to-64-bit extension.  See adapters.h. */
#include "counter.h"
#include <stddef.h>
#include <sys/time.h>
#include <time.h>
#include "adapters.h"
#include "annotate.h"
#include "osclock.h"

#define TWO32 4294967296.0
#define ANCHOR_AGE_USEC 1000

#ifdef _WIN32
/* QueryPerformanceCounter: mingw-w64's clock_gettime is winpthread's. */
#include <windows.h>

long long cpucycles_clock_usec(void)
{
  LARGE_INTEGER t, f;
  QueryPerformanceCounter(&t);
  QueryPerformanceFrequency(&f);
  /* seconds and remainder apart: t * 1000000 could overflow */
  return t.QuadPart / f.QuadPart * 1000000LL
         + t.QuadPart % f.QuadPart * 1000000LL / f.QuadPart;
}
#else
/* Through osclock.h: the vDSO's clocks may fault where RDTSC is off. */
long long cpucycles_clock_usec(void)
{
  struct timeval tv;
#ifdef CLOCK_MONOTONIC
  struct timespec ts;
  if (cpucycles_osclock_gettime(CLOCK_MONOTONIC, &ts) == 0)
    return (long long) ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
#endif
  if (cpucycles_osclock_gettimeofday(&tv) == 0)
    return (long long) tv.tv_sec * 1000000LL + tv.tv_usec;
  return -1; /* both refused (a seccomp filter) */
}
#endif

#define PAIR_BRACKET_USEC 10
#define PAIR_TRIES 100

int cpucycles_paired_reading(long long (*read)(void), long long (*clock)(void),
                             long long *usec, long long *ticks, long long *spread)
{
  long long before, after;
  int tries = 0;
  do {
    if ((before = clock()) < 0) return -1;
    *ticks = read();
    if ((after = clock()) < 0) return -1;
  } while (after - before > PAIR_BRACKET_USEC && ++tries < PAIR_TRIES);
  *usec = before + (after - before) / 2;
  if (spread) *spread = after - before;
  return 0;
}

static void anchor_store(struct extend32_anchor *a, long long usec, long long ticks)
{
  atomic_store_explicit(&a->usec, usec, memory_order_relaxed);
  atomic_store_explicit(&a->ticks, ticks, memory_order_relaxed);
}

/* Readers use copy[1] while copy[0] is written, then copy[0]. */
static void anchor_write(struct extend32 *e, long long usec, long long ticks)
{
  unsigned long long s = atomic_load_explicit(&e->sequence, memory_order_relaxed);
  atomic_store_explicit(&e->sequence, s + 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  anchor_store(&e->copy[0], usec, ticks);
  atomic_store_explicit(&e->sequence, s + 2, memory_order_release);
  atomic_thread_fence(memory_order_release);
  anchor_store(&e->copy[1], usec, ticks);
}

static void anchor_read(struct extend32 *e, long long *usec, long long *ticks)
{
  for (;;) {
    unsigned long long s = atomic_load_explicit(&e->sequence, memory_order_acquire);
    const struct extend32_anchor *a = &e->copy[s & 1];
    *usec = atomic_load_explicit(&a->usec, memory_order_relaxed);
    *ticks = atomic_load_explicit(&a->ticks, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&e->sequence, memory_order_relaxed) == s) return;
  }
}

void cpucycles_extend32_start(struct extend32 *e, double ticks_per_usec,
                              unsigned long long raw, long long usec)
{
  e->ticks_per_usec = ticks_per_usec;
  atomic_init(&e->sequence, 0);
  atomic_flag_clear(&e->writing);
  anchor_store(&e->copy[0], usec, (long long) (raw & 0xffffffffULL));
  anchor_store(&e->copy[1], usec, (long long) (raw & 0xffffffffULL));
}

long long cpucycles_extend32_value(struct extend32 *e,
                                   unsigned long long raw, long long usec)
{
  long long anchor_usec, anchor_ticks, wraps, ticks;
  unsigned long long step;
  double expected, w;
  anchor_read(e, &anchor_usec, &anchor_ticks);
  /* Ticks since the anchor, modulo 2^32: the part the counter knows. */
  step = (raw - (unsigned long long) anchor_ticks) & 0xffffffffULL;
  /* The clock knows the whole wraps; negative when another thread moved
   * the anchor after this reading was taken. */
  expected = (double) (usec - anchor_usec) * e->ticks_per_usec;
  w = (expected - (double) step) / TWO32;
  if (w > 1e9) w = 1e9;
  if (w < -1e9) w = -1e9;
  wraps = (long long) (w >= 0 ? w + 0.5 : w - 0.5);
  ticks = anchor_ticks + (long long) step + wraps * (long long) TWO32;
  if (usec - anchor_usec >= ANCHOR_AGE_USEC && ticks > anchor_ticks
      && !atomic_flag_test_and_set_explicit(&e->writing, memory_order_acquire)) {
    anchor_write(e, usec, ticks);
    atomic_flag_clear_explicit(&e->writing, memory_order_release);
  }
  return ticks;
}

/* ---- exact scaling (adapters.h says why it is exact) ---- */

void cpucycles_exact_scale_start(struct exact_scale *s, long long num, long long den)
{
  unsigned long long n = (unsigned long long) num, d = (unsigned long long) den;
  unsigned long long r, high = 0, low = 0;
  int i;
  s->whole = n / d;
  /* 128 bits of rest/den by long division (the first call only): r < d <
   * 2^63, so 2r cannot overflow. */
  r = n % d;
  for (i = 0; i < 128; i++) {
    high = high << 1 | low >> 63;
    low <<= 1;
    r <<= 1;
    if (r >= d) {
      r -= d;
      low |= 1;
    }
  }
  /* rounded up; cannot carry out of 128 bits, since rest/den < 1 - 2^-64 */
  if (r != 0 && ++low == 0) high++;
  s->fraction_high = high;
  s->fraction_low = low;
}

/* The upper half of a * b (the lower in *low) from 32x32-bit products. */
static inline unsigned long long multiply_64x64(unsigned long long a, unsigned long long b,
                                                unsigned long long *low)
{
  unsigned long long a0 = a & 0xffffffffULL, a1 = a >> 32;
  unsigned long long b0 = b & 0xffffffffULL, b1 = b >> 32;
  unsigned long long p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  unsigned long long middle = (p00 >> 32) + (p01 & 0xffffffffULL) + (p10 & 0xffffffffULL);
  *low = middle << 32 | (p00 & 0xffffffffULL);
  return p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32);
}

static inline unsigned long long scale_portable(const struct exact_scale *s,
                                                unsigned long long ticks)
{
  unsigned long long ignored, low, high, sum;
  /* bits 128 and up of ticks * fraction */
  sum = multiply_64x64(ticks, s->fraction_low, &ignored);
  high = multiply_64x64(ticks, s->fraction_high, &low);
  sum += low;
  high += sum < low;
  return ticks * s->whole + high;
}

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 uint128;

static inline unsigned long long scale(const struct exact_scale *s, unsigned long long ticks)
{
  uint128 sum = ((uint128) ticks * s->fraction_low >> 64) + (uint128) ticks * s->fraction_high;
  return ticks * s->whole + (unsigned long long) (sum >> 64);
}
#else
static inline unsigned long long scale(const struct exact_scale *s, unsigned long long ticks)
{
  return scale_portable(s, ticks);
}
#endif

unsigned long long cpucycles_exact_scale(const struct exact_scale *s, unsigned long long ticks)
{
  return scale(s, ticks);
}

unsigned long long cpucycles_exact_scale_portable(const struct exact_scale *s,
                                                  unsigned long long ticks)
{
  return scale_portable(s, ticks);
}

/* ---- the wrappers ---- */

/* Published with release order before cpucycles() points at a wrapper. */
struct wrapper {
  long long (*read)(void);
  /* value = floor((ticks - base) * num / den) - offset (wrapper_start) */
  unsigned long long base;
  unsigned long long offset;
  struct exact_scale scale;
  struct extend32 extend;
};

static struct wrapper installed;
static struct wrapper *_Atomic active;

/* Scaling by num/den from the reading first, which gives 0.  Ticks behind
 * first happen (another CPU's counter, a clock stepped back, an extend32
 * reading older than its anchor) and must give small negative values, not
 * a jump through 2^64: so ticks count from a base m * den below first
 * (about 2^62, at least 2^61), and the m * num cycles of that bias are
 * subtracted again, exactly. */
static void wrapper_start(struct wrapper *w, unsigned long long first, long long num,
                          long long den)
{
  unsigned long long d = (unsigned long long) den;
  unsigned long long m = d <= 1ULL << 62 ? (1ULL << 62) / d : 1;
  cpucycles_exact_scale_start(&w->scale, num, den);
  w->base = first - m * d;
  w->offset = m * (unsigned long long) num;
}

/* Modulo 2^64: two's complement with gcc and clang. */
static long long scaled_read(void)
{
  struct wrapper *w = atomic_load_explicit(&active, memory_order_acquire);
  return (long long) (scale(&w->scale, (unsigned long long) w->read() - w->base) - w->offset);
}

static long long extended_read(void)
{
  struct wrapper *w = atomic_load_explicit(&active, memory_order_acquire);
  unsigned long long raw = (unsigned long long) w->read();
  long long ticks = cpucycles_extend32_value(&w->extend, raw, cpucycles_clock_usec());
  return (long long) (scale(&w->scale, (unsigned long long) ticks - w->base) - w->offset);
}

/* A bound on the readings below, for a clock that never moves. */
#define MEASURE_READINGS_MAX 10000000L

/* Ticks per microsecond of a 32-bit counter over about 2 ms (no wrap
 * below 2 THz), each end known to 5 us: to about 0.5%.  fallback when the
 * clock does not answer or does not move. */
static double measure_ticks_per_usec(long long (*read)(void), double fallback)
{
  long long start_usec, usec, start, now, n = 0;
  unsigned long long ticks;
  if (cpucycles_paired_reading(read, cpucycles_clock_usec, &start_usec, &start, 0) != 0)
    return fallback;
  do {
    if (++n > MEASURE_READINGS_MAX
        || cpucycles_paired_reading(read, cpucycles_clock_usec, &usec, &now, 0) != 0)
      return fallback;
  } while (usec - start_usec < 2000 && usec >= start_usec);
  ticks = ((unsigned long long) now - (unsigned long long) start) & 0xffffffffULL;
  if (usec <= start_usec || ticks == 0) return fallback;
  return (double) ticks / (double) (usec - start_usec);
}

/* Under valgrind only: the same reads, after telling the race detectors
 * what the acquire load of active orders. */
static long long scaled_read_annotated(void)
{
  (void) atomic_load_explicit(&active, memory_order_acquire);
  CPUCYCLES_HAPPENS_AFTER(&active);
  return scaled_read();
}

static long long extended_read_annotated(void)
{
  (void) atomic_load_explicit(&active, memory_order_acquire);
  CPUCYCLES_HAPPENS_AFTER(&active);
  return extended_read();
}

/* Ordered by active (annotate.h); only the extend32 anchor (sequence to
 * the struct's end), moved by callers with atomics, is not checked. */
static void publish_wrapper(void)
{
  CPUCYCLES_ATOMIC(&active, sizeof active);
  CPUCYCLES_ATOMIC(&installed.extend.sequence,
                   sizeof installed.extend - offsetof(struct extend32, sequence));
  CPUCYCLES_HAPPENS_BEFORE(&active);
  atomic_store_explicit(&active, &installed, memory_order_release);
#ifdef CPUCYCLES_TEST_RACE
  /* tests/check-sanitizers.sh: a data race helgrind and DRD must report */
  *(volatile unsigned long long *) &installed.offset = installed.offset;
#endif
}

long long (*cpucycles_adapter_for(const struct choice *choice,
                                  long long persecond))(void)
{
  const struct counter *c = choice->counter;
  long long frequency = choice->info.frequency;
  /* a timer kept with a measured multiplier (cycles per tick) */
  if (frequency <= 0 && choice->info.rate_unknown && choice->scaling > 0 && persecond > 0)
    frequency = (long long) ((double) persecond / choice->scaling + 0.5);
  /* 1/1 without a frequency (with one, the probe dropped a persecond <= 0) */
  int counts_cycles = frequency <= 0 || persecond <= 0 || frequency == persecond;
  long long num = counts_cycles ? 1 : persecond, den = counts_cycles ? 1 : frequency;
  if (!choice->info.only32 && counts_cycles) return c->read;
  installed.read = c->read;
  if (choice->info.only32) {
#ifndef _WIN32
    cpucycles_osclock_setup(); /* extend32 reads the clock on every call */
#endif
    double guess = (double) (choice->info.frequency ? choice->info.frequency
                                                    : persecond) / 1e6;
    double rate = measure_ticks_per_usec(c->read, guess);
    unsigned long long raw = (unsigned long long) c->read();
    cpucycles_extend32_start(&installed.extend, rate, raw, cpucycles_clock_usec());
    wrapper_start(&installed, raw & 0xffffffffULL, num, den);
    publish_wrapper();
    return CPUCYCLES_UNDER_VALGRIND ? extended_read_annotated : extended_read;
  }
  wrapper_start(&installed, (unsigned long long) c->read(), num, den);
  publish_wrapper();
  return CPUCYCLES_UNDER_VALGRIND ? scaled_read_annotated : scaled_read;
}
