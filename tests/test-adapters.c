/* The scaled and extend32 wrappers. */
#include <config.h>
#include <check.h>
#include "check-run.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include "adapters.h"
#include "exact-reference.h"

#define MASK32 0xffffffffULL

/* A counter at 3000 ticks per microsecond wraps every 1.43 s. */
#define RATE 3000

START_TEST(extend32_follows_many_wraps)
{
  struct extend32 e;
  long long usec = 1000000, truth = 123;
  int i;
  cpucycles_extend32_start(&e, RATE, (unsigned long long) truth & MASK32, usec);
  for (i = 0; i < 20000; i++) {
    usec += 97 + (i % 13) * 1000;   /* up to ~8 wraps over the run */
    truth += (97 + (i % 13) * 1000) * (long long) RATE;
    ck_assert_int_eq(cpucycles_extend32_value(&e, (unsigned long long) truth & MASK32, usec), truth);
  }
  ck_assert(truth > 50 * 4294967296LL); /* the run crossed many wraps */
}
END_TEST

START_TEST(extend32_gap_of_several_wraps)
{
  struct extend32 e;
  long long usec = 5, truth = 4000000000LL;
  int gap;
  cpucycles_extend32_start(&e, RATE, (unsigned long long) truth & MASK32, usec);
  for (gap = 1; gap <= 9; gap++) {
    long long dt = gap * 1431655LL + 777; /* gap wraps and a bit */
    usec += dt;
    truth += dt * RATE;
    ck_assert_int_eq(cpucycles_extend32_value(&e, (unsigned long long) truth & MASK32, usec), truth);
  }
}
END_TEST

START_TEST(extend32_tolerates_rate_error)
{
  /* The rate is known to 2%: a gap of 5 wraps is still placed right. */
  struct extend32 e;
  long long usec = 0, truth = 0;
  cpucycles_extend32_start(&e, RATE * 1.02, 0, usec);
  usec += 5 * 1431655LL + 1234;
  truth += (5 * 1431655LL + 1234) * RATE;
  ck_assert_int_eq(cpucycles_extend32_value(&e, (unsigned long long) truth & MASK32, usec), truth);
}
END_TEST

START_TEST(extend32_reading_older_than_anchor)
{
  /* Another thread may move the anchor past a reading taken earlier:
   * the reading must come out just below the anchor, not 2^32 above. */
  struct extend32 e;
  long long usec = 1000000, truth = 4294967290LL;
  cpucycles_extend32_start(&e, RATE, 0, 0);
  ck_assert_int_eq(cpucycles_extend32_value(&e, (unsigned long long) truth & MASK32, usec), truth);
  ck_assert_int_eq(cpucycles_extend32_value(&e, (unsigned long long) (truth - 30) & MASK32, usec - 1),
                   truth - 30);
}
END_TEST

/* Many threads share one extend32 and one fake time; each reading is
 * taken at a distinct time, so its exact 64-bit value is known. */
static struct extend32 shared;
static atomic_llong shared_usec;

static void *hammer(void *arg)
{
  intptr_t bad = 0;
  int i;
  (void) arg;
  for (i = 0; i < 200000; i++) {
    long long usec = atomic_fetch_add(&shared_usec, 37) + 37;
    long long truth = usec * RATE;
    if (cpucycles_extend32_value(&shared, (unsigned long long) truth & MASK32, usec) != truth) bad++;
  }
  return (void *) bad;
}

START_TEST(extend32_many_threads_at_once)
{
  pthread_t t[8];
  int i;
  long total = 0;
  atomic_init(&shared_usec, 0);
  cpucycles_extend32_start(&shared, RATE, 0, 0);
  for (i = 0; i < 8; i++) ck_assert_int_eq(pthread_create(&t[i], 0, hammer, 0), 0);
  for (i = 0; i < 8; i++) {
    void *bad;
    pthread_join(t[i], &bad);
    total += (long) (intptr_t) bad;
  }
  ck_assert_int_eq(total, 0);
  ck_assert(atomic_load(&shared_usec) * RATE > 20 * 4294967296LL);
}
END_TEST

/* A fake 32-bit counter at 10^5 ticks per microsecond of the real clock:
 * it wraps every 43 ms, so the wrapper installed by cpucycles_adapter_for()
 * meets many wraps within a short test, while a preemption of up to half a
 * wrap (21 ms) between the wrapper's counter and clock reads, as happens on
 * a loaded machine, stays harmless (a real 32-bit counter wraps every few
 * seconds). */
#define FAST32_RATE 100000LL
static long long fast32_read(void)
{
  return (long long) (((unsigned long long) cpucycles_clock_usec() * FAST32_RATE) & MASK32);
}

static int fast32_setup(struct counter_info *info)
{
  (void) info;
  return 0;
}

static const struct counter fast32 = { "fast32", fast32_read, fast32_setup, 0, 0, COUNTER_TRIES };

/* The installed extend32 wrapper over fast32, scaled by num/den (the
 * counter's frequency den, persecond num; 1/1: no frequency). */
static void extend32_wrapper_counts_through_wraps(long long num, long long den)
{
  struct choice c = { &fast32, { .kind = COUNTER_ONCORE, .only32 = 1 }, 1.0, 1 };
  long long (*fn)(void);
  struct timespec pause = { 0, 25000000 };
  long long first_before, first_after, first, before, after, now;
  int i;
  if (num != den) {
    c.info.frequency = den;
    c.scaling = (double) num / (double) den;
  }
  fn = cpucycles_adapter_for(&c, num != den ? num : 100000000000LL);
  ck_assert(fn != fast32.read);
  first_before = cpucycles_clock_usec();
  first = fn();
  first_after = cpucycles_clock_usec();
  for (i = 0; i < 20; i++) {
    nanosleep(&pause, 0);
    before = cpucycles_clock_usec();
    now = fn();
    after = cpucycles_clock_usec();
    /* The fake counter is the clock times 10^5, so the extended count
     * since the first call lies between what the clock readings around
     * the two calls allow (scaled, each end rounded down): any wrap lost
     * or invented is 43 ms off. */
    ck_assert_int_ge(now - first, (long long) ((double) ((before - first_after) * FAST32_RATE)
                                               * (double) num / (double) den) - 2);
    ck_assert_int_le(now - first, (long long) ((double) ((after - first_before) * FAST32_RATE)
                                               * (double) num / (double) den) + 2);
  }
  ck_assert_int_gt(now - first, 8 * 4294967296LL); /* 500 ms: 11 wraps */
}

START_TEST(installed_extend32_wrapper_counts_through_wraps)
{
  extend32_wrapper_counts_through_wraps(1, 1);
}
END_TEST

START_TEST(installed_extend32_wrapper_scales_exactly)
{
  /* a 32-bit timer at 2 GHz on a 5 GHz CPU: 2.5 cycles per tick */
  extend32_wrapper_counts_through_wraps(5000000000LL, 2000000000LL);
}
END_TEST

static long long slow_ns;
static long long slow_read(void)
{
  return slow_ns;
}

static const struct counter nanoclock = { "nanoclock", slow_read, fast32_setup, 0, 0, COUNTER_TRIES };

START_TEST(installed_scaled_wrapper_scales_from_installation)
{
  struct choice c = { &nanoclock, { .kind = COUNTER_OSCLOCK, .frequency = 1000000000LL }, 2.5, 260 };
  long long (*fn)(void);
  slow_ns = 1000000000000LL;
  fn = cpucycles_adapter_for(&c, 2500000000LL);
  ck_assert(fn != nanoclock.read);
  ck_assert_int_eq(fn(), 0);
  slow_ns += 1000;
  ck_assert_int_eq(fn(), 2500);
  slow_ns += 4000000000000000LL; /* 46 days later, still exact */
  ck_assert_int_eq(fn(), 2500 + 10000000000000000LL);
}
END_TEST

/* floor(delta * num / den) modulo 2^64 for a signed delta: below 0 by
 * way of m * den ticks being exactly m * num cycles. */
static unsigned long long reference_signed(long long delta, unsigned long long num,
                                           unsigned long long den)
{
  unsigned long long k, m;
  if (delta >= 0) return reference((unsigned long long) delta, num, den);
  k = 0 - (unsigned long long) delta;
  m = k / den + 1;
  return reference(m * den - k, num, den) - m * num;
}

/* The scaled wrapper the library installs over nanoclock (first read at
 * start), for a counter of this frequency and this persecond. */
static long long (*scaled_over_nanoclock(long long start, long long frequency,
                                        long long persecond))(void)
{
  struct choice c = { &nanoclock, { .kind = COUNTER_OSCLOCK }, 0, 260 };
  long long (*fn)(void);
  c.info.frequency = frequency;
  c.scaling = (double) persecond / (double) frequency;
  slow_ns = start;
  fn = cpucycles_adapter_for(&c, persecond);
  ck_assert(frequency == persecond ? fn == nanoclock.read : fn != nanoclock.read);
  return fn;
}

/* The fake clock at start + ticks (modulo 2^64, as a counter wraps). */
static void nanoclock_at(long long start, unsigned long long ticks)
{
  slow_ns = (long long) ((unsigned long long) start + ticks);
}

START_TEST(scaled_wrapper_exact_decades_after_first_call)
{
  /* default-monotonic at 2.3 GHz, 20 years after the first call: every
   * nanosecond is 2.3 cycles, rounded down, not a multiple of 256. */
  const unsigned long long twenty_years = 20ULL * 31557600ULL * 1000000000ULL;
  long long (*fn)(void) = scaled_over_nanoclock(123456789, 1000000000LL, 2300000000LL);
  long long previous = 0;
  unsigned long long i;
  for (i = 0; i < 1000; i++) {
    long long v;
    nanoclock_at(123456789, twenty_years + i);
    v = fn();
    ck_assert_uint_eq((unsigned long long) v, (twenty_years + i) / 10 * 23 + (twenty_years + i) % 10 * 23 / 10);
    ck_assert_uint_eq((unsigned long long) v, reference(twenty_years + i, 23, 10));
    if (i > 0) ck_assert(v - previous == 2 || v - previous == 3);
    previous = v;
  }
}
END_TEST

START_TEST(scaled_wrapper_counter_crossing_2_63)
{
  /* A counter whose raw value passes 2^63 (as a long long: from LLONG_MAX
   * to LLONG_MIN) after the first call: the count goes on. */
  const long long start = 9223372036854775807LL - 1000;
  long long (*fn)(void) = scaled_over_nanoclock(start, 1000000000LL, 2300000000LL);
  unsigned long long i;
  for (i = 0; i < 2000; i += 7) {
    nanoclock_at(start, i);
    ck_assert_uint_eq((unsigned long long) fn(), reference(i, 23, 10));
  }
}
END_TEST

START_TEST(scaled_wrapper_ticks_since_first_call_past_2_63)
{
  /* 2^63 ticks and more since the first call (a 1 GHz clock for 292
   * years, at a 1 MHz estimate): the ticks count as unsigned. */
  long long (*fn)(void) = scaled_over_nanoclock(-5, 1000000000LL, 1000000LL);
  unsigned long long ticks;
  for (ticks = (1ULL << 63) - 3000; ticks < (1ULL << 63) + 3000; ticks += 11) {
    nanoclock_at(-5, ticks);
    ck_assert_uint_eq((unsigned long long) fn(), ticks / 1000);
  }
}
END_TEST

START_TEST(scaled_wrapper_reading_behind_first_call)
{
  /* A reading behind the first call's (another CPU's counter a few ticks
   * behind, a wall clock stepped back, by a second or by a century)
   * gives a negative count, exact like the others, not a jump. */
  static const long long behind[] = {
    1, 2, 3, 9, 10, 11, 210, 1000000000LL, 3155760000000000000LL, 2305843009213693951LL
  };
  size_t k;
  long long (*fn)(void) = scaled_over_nanoclock(500, 1000000000LL, 2300000000LL);
  for (k = 0; k < sizeof behind / sizeof behind[0]; k++) {
    nanoclock_at(500, 0 - (unsigned long long) behind[k]);
    ck_assert_int_eq(fn(), (long long) reference_signed(-behind[k], 23, 10));
    ck_assert_int_lt(fn(), 0);
  }
  nanoclock_at(500, 0 - 10ULL);
  ck_assert_int_eq(fn(), -23);
  nanoclock_at(500, 0 - 9ULL);
  ck_assert_int_eq(fn(), -21); /* floor(-20.7) */
  fn = scaled_over_nanoclock(500, 1000000LL, 2596094000LL);
  nanoclock_at(500, 0 - 1000000ULL); /* gettimeofday stepped back by 1 s */
  ck_assert_int_eq(fn(), -2596094000LL);
}
END_TEST

START_TEST(scaled_wrapper_result_across_2_63)
{
  /* The count itself passes 2^63 (127 years at 2.3 GHz): it goes on
   * modulo 2^64, as a 64-bit cycle counter does, so differences taken as
   * unsigned stay right. */
  const unsigned long long at = (1ULL << 63) / 23 * 10 - 1000;
  long long (*fn)(void) = scaled_over_nanoclock(77, 1000000000LL, 2300000000LL);
  unsigned long long previous = 0, i;
  int crossed = 0;
  for (i = 0; i < 2000; i++) {
    unsigned long long v;
    nanoclock_at(77, at + i);
    v = (unsigned long long) fn();
    ck_assert_uint_eq(v, reference(at + i, 23, 10));
    if (i > 0) ck_assert(v - previous == 2 || v - previous == 3);
    if (previous < (1ULL << 63) && v >= (1ULL << 63)) crossed = 1;
    previous = v;
  }
  ck_assert(crossed);
}
END_TEST

/* A small deterministic generator (xorshift64). */
static unsigned long long rng = 0x9e3779b97f4a7c15ULL;
static unsigned long long next_random(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* A random number of up to 64 bits, its size random too. */
static unsigned long long random_bits(void)
{
  return next_random() >> (next_random() % 64);
}

/* Ticks since the first call where the wrapper is exact (adapters.h):
 * from 2^61 before to 2^63 after, random sizes. */
static long long random_delta(void)
{
  unsigned long long r = random_bits();
  return r & 1 ? -(long long) (r >> 3) : (long long) (r >> 1);
}

START_TEST(scaled_wrapper_exact_for_any_ratio)
{
  /* The ratios the probe hands over (persecond over a counter's
   * frequency: OS clocks, timers of tens of MHz, the TSC, QPC's ACPI
   * timer, s390x's 4.096 GHz), extreme ones, and random ones; each at
   * random distances from the first call, 2^61 ticks before it to 2^63
   * after. */
  static const long long frequencies[] = {
    1000000LL, 1000000000LL, 24000000LL, 19200000LL, 25000000LL, 54000000LL,
    3579545LL, 10000000LL, 4096000000LL, 2599999000LL, 1LL, 3LL,
    9223372036854775807LL, 9223372036854775783LL, 1099511627776LL
  };
  static const long long persecond[] = {
    2399987654LL, 2596094000LL, 1000000LL, 100000000000LL, 4096000000LL, 1LL,
    9223372036854775807LL
  };
  size_t f, p;
  int i;
  for (f = 0; f < sizeof frequencies / sizeof frequencies[0]; f++)
    for (p = 0; p < sizeof persecond / sizeof persecond[0]; p++) {
      long long start = (long long) next_random();
      long long (*fn)(void) = scaled_over_nanoclock(start, frequencies[f], persecond[p]);
      if (frequencies[f] == persecond[p]) continue; /* called directly */
      ck_assert_int_eq(fn(), 0);
      for (i = 0; i < 200; i++) {
        long long delta = random_delta();
        nanoclock_at(start, (unsigned long long) delta);
        ck_assert_uint_eq((unsigned long long) fn(),
                          reference_signed(delta, (unsigned long long) persecond[p],
                                           (unsigned long long) frequencies[f]));
      }
    }
  for (i = 0; i < 20000; i++) {
    long long frequency = (long long) (random_bits() >> 1), second = (long long) (random_bits() >> 1);
    long long start = (long long) next_random(), delta = random_delta();
    long long (*fn)(void);
    if (frequency == 0 || second == 0 || frequency == second) continue;
    fn = scaled_over_nanoclock(start, frequency, second);
    nanoclock_at(start, (unsigned long long) delta);
    ck_assert_uint_eq((unsigned long long) fn(),
                      reference_signed(delta, (unsigned long long) second,
                                       (unsigned long long) frequency));
  }
}
END_TEST

START_TEST(exact_scale_both_ways_match_reference)
{
  /* The arithmetic alone, both as the wrappers of this ISA compute it and
   * as 32-bit ISAs do (64-bit integers only): extremes, then random. */
  static const long long extremes[] = {
    1, 2, 3, 10, 1000000000LL, 4294967295LL, 4294967296LL, 4294967297LL,
    9223372036854775806LL, 9223372036854775807LL
  };
  static const unsigned long long ticks_extremes[] = {
    0, 1, 2, 4294967295ULL, 4294967296ULL, (1ULL << 63) - 1, 1ULL << 63,
    (1ULL << 63) + 1, 18446744073709551614ULL, 18446744073709551615ULL
  };
  struct exact_scale scale;
  size_t n, d, t;
  int i;
  for (n = 0; n < sizeof extremes / sizeof extremes[0]; n++)
    for (d = 0; d < sizeof extremes / sizeof extremes[0]; d++) {
      cpucycles_exact_scale_start(&scale, extremes[n], extremes[d]);
      for (t = 0; t < sizeof ticks_extremes / sizeof ticks_extremes[0]; t++) {
        unsigned long long want = reference(ticks_extremes[t], (unsigned long long) extremes[n],
                                            (unsigned long long) extremes[d]);
        ck_assert_uint_eq(cpucycles_exact_scale(&scale, ticks_extremes[t]), want);
        ck_assert_uint_eq(cpucycles_exact_scale_portable(&scale, ticks_extremes[t]), want);
      }
    }
  for (i = 0; i < 100000; i++) {
    long long num = (long long) (random_bits() >> 1), den = (long long) (random_bits() >> 1);
    unsigned long long ticks = random_bits(), want;
    if (num == 0 || den == 0) continue;
    cpucycles_exact_scale_start(&scale, num, den);
    want = reference(ticks, (unsigned long long) num, (unsigned long long) den);
    ck_assert_uint_eq(cpucycles_exact_scale(&scale, ticks), want);
    ck_assert_uint_eq(cpucycles_exact_scale_portable(&scale, ticks), want);
  }
}
END_TEST

START_TEST(unscaled_64bit_counter_is_called_directly)
{
  struct choice c = { &nanoclock, { .kind = COUNTER_ONCORE }, 1.0, 1 };
  ck_assert(cpucycles_adapter_for(&c, 2500000000LL) == nanoclock.read);
}
END_TEST

/* A timer whose rate nobody states (CNTFRQ_EL0 0, no time-base
 * frequency): the probe measured its multiplier, 41.5 cycles per tick;
 * the wrapper scales by it, although no frequency is known. */
START_TEST(measured_multiplier_is_applied)
{
  struct choice c = { &nanoclock, { .kind = COUNTER_OFFCORE, .rate_unknown = 1 }, 41.5, 141 };
  long long (*fn)(void);
  slow_ns = 123456789;
  fn = cpucycles_adapter_for(&c, 2490000000LL); /* a 60 MHz timer */
  ck_assert(fn != nanoclock.read);
  ck_assert_int_eq(fn(), 0);
  slow_ns += 2;
  ck_assert_int_eq(fn(), 83);
  slow_ns += 60000000LL * 3600 * 24 * 365; /* a year of ticks later */
  ck_assert_int_eq(fn(), 83 + 2490000000LL * 3600 * 24 * 365);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("adapters");
  TCase *t = tcase_create("extend32");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, extend32_follows_many_wraps);
  tcase_add_test(t, extend32_gap_of_several_wraps);
  tcase_add_test(t, extend32_tolerates_rate_error);
  tcase_add_test(t, extend32_reading_older_than_anchor);
  tcase_add_test(t, extend32_many_threads_at_once);
  tcase_add_test(t, installed_extend32_wrapper_counts_through_wraps);
  tcase_add_test(t, installed_extend32_wrapper_scales_exactly);
  suite_add_tcase(s, t);
  t = tcase_create("scaled");
  tcase_add_test(t, installed_scaled_wrapper_scales_from_installation);
  tcase_add_test(t, scaled_wrapper_exact_decades_after_first_call);
  tcase_add_test(t, scaled_wrapper_counter_crossing_2_63);
  tcase_add_test(t, scaled_wrapper_ticks_since_first_call_past_2_63);
  tcase_add_test(t, scaled_wrapper_reading_behind_first_call);
  tcase_add_test(t, scaled_wrapper_result_across_2_63);
  tcase_add_test(t, scaled_wrapper_exact_for_any_ratio);
  tcase_add_test(t, exact_scale_both_ways_match_reference);
  tcase_add_test(t, unscaled_64bit_counter_is_called_directly);
  tcase_add_test(t, measured_multiplier_is_applied);
  suite_add_tcase(s, t);
  return run_suite(s);
}
