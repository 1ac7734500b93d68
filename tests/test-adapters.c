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

static const struct counter fast32 = { "fast32", fast32_read, fast32_setup, 0, 0 };

START_TEST(installed_extend32_wrapper_counts_through_wraps)
{
  struct choice c = { &fast32, { .kind = COUNTER_ONCORE, .only32 = 1 }, 1.0, 1 };
  long long (*fn)(void) = cpucycles_adapter_for(&c, 100000000000LL);
  struct timespec pause = { 0, 25000000 };
  long long first_before, first_after, first, before, after, now;
  int i;
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
     * the two calls allow: any wrap lost or invented is 43 ms off. */
    ck_assert_int_ge(now - first, (before - first_after) * FAST32_RATE);
    ck_assert_int_le(now - first, (after - first_before) * FAST32_RATE);
  }
  ck_assert_int_gt(now - first, 8 * 4294967296LL); /* 500 ms: 11 wraps */
}
END_TEST

static long long slow_ns;
static long long slow_read(void)
{
  return slow_ns;
}

static const struct counter nanoclock = { "nanoclock", slow_read, fast32_setup, 0, 0 };

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

START_TEST(unscaled_64bit_counter_is_called_directly)
{
  struct choice c = { &nanoclock, { .kind = COUNTER_ONCORE }, 1.0, 1 };
  ck_assert(cpucycles_adapter_for(&c, 2500000000LL) == nanoclock.read);
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
  suite_add_tcase(s, t);
  t = tcase_create("scaled");
  tcase_add_test(t, installed_scaled_wrapper_scales_from_installation);
  tcase_add_test(t, unscaled_64bit_counter_is_called_directly);
  suite_add_tcase(s, t);
  return run_suite(s);
}
