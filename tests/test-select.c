/* The probe as pure logic, fed fake counters (tests/fake-counters.c). */
#include <config.h>
#include <check.h>
#include "check-run.h"
#include <errno.h>
#ifndef _WIN32
#include <pthread.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "checked-by.h"
#include "fake-counters.h"
#include "multiplier.h"
#include "seams.h"
#include "select.h"

#define PERSECOND 2400000000LL

static const struct counter *table[FAKE_SLOTS];

/* The fakes tick at no real rate: without a clock the rates they state
 * stand unchecked (as where a sandbox refuses the clock).  The rate
 * check's tests and the multiplier's set clocks of their own. */
static long long no_clock(void) { return -1; }

static void setup(void)
{
  static long long (*fake_read)(void);
  int i;
  cpucycles_multiplier_set_clock(no_clock);
  fakes_reset();
  /* a test may put a timer of its own in slot 0 */
  if (!fake_read) fake_read = fake_counters[0].read;
  fake_counters[0].read = fake_read;
  for (i = 0; i < FAKE_SLOTS; i++) table[i] = &fake_counters[i];
}

static int select_among(int count, const char *name, struct choice *c)
{
  return cpucycles_select(table, count, PERSECOND, name, 0, 0, c);
}

START_TEST(sigill_counter_is_dropped)
{
  struct choice c;
#ifndef _WIN32 /* Windows: an exception, not a signal (test-windows.c) */
  struct sigaction before, after;
  sigaction(SIGILL, 0, &before);
#endif
  fakes[0].failure = FAKE_READ_SIGILL;
  ck_assert_int_eq(select_among(2, 0, &c), 1);
  ck_assert_str_eq(c.counter->name, "fake-1");
  ck_assert_int_eq(fakes[0].releases, 1);
#ifndef _WIN32
  sigaction(SIGILL, 0, &after);
  ck_assert_ptr_eq((void *) after.sa_handler, (void *) before.sa_handler);
#endif
}
END_TEST

START_TEST(setup_crash_is_dropped)
{
  struct choice c;
  fakes[0].failure = FAKE_SETUP_SIGSEGV;
  ck_assert_int_eq(select_among(2, 0, &c), 1);
  ck_assert_int_eq(fakes[0].releases, 1);
}
END_TEST

START_TEST(setup_refusal_is_dropped)
{
  struct choice c;
  fakes[0].failure = FAKE_SETUP_REFUSES;
  ck_assert_int_eq(select_among(2, 0, &c), 1);
}
END_TEST

START_TEST(decreasing_counter_retried_ten_times_then_dropped)
{
  struct choice c;
  fakes[0].failure = FAKE_DECREASES;
  fakes[0].bad_attempts = SELECT_ATTEMPTS;
  ck_assert_int_eq(select_among(2, 0, &c), 1);
  ck_assert_int_eq(fakes[0].reads, SELECT_ATTEMPTS * SELECT_SAMPLES);
}
END_TEST

START_TEST(decreasing_counter_kept_when_a_retry_succeeds)
{
  struct choice c;
  fakes[0].failure = FAKE_DECREASES;
  fakes[0].bad_attempts = SELECT_ATTEMPTS - 1;
  ck_assert_int_eq(select_among(1, 0, &c), 0);
  ck_assert_int_eq(fakes[0].reads, SELECT_ATTEMPTS * SELECT_SAMPLES);
  ck_assert_int_eq(c.precision, 1);
}
END_TEST

START_TEST(counter_that_never_moves_is_dropped)
{
  struct choice c;
  fakes[0].failure = FAKE_NEVER_MOVES;
  ck_assert_int_eq(select_among(1, 0, &c), -1);
  ck_assert_str_eq(c.counter->name, "default-zero");
  ck_assert_int_eq(fakes[0].reads, SELECT_ATTEMPTS * SELECT_SAMPLES);
}
END_TEST

START_TEST(precision_is_smallest_nonzero_step)
{
  struct choice c;
  long long pattern[] = { 9, 0, 7, 0, 12, 5, 30, 0 };
  memcpy(fakes[0].steps, pattern, sizeof pattern);
  fakes[0].nsteps = 8;
  ck_assert_int_eq(select_among(1, 0, &c), 0);
  ck_assert_int_eq(c.precision, 5);
}
END_TEST

/* libcpucycles' penalties, by what its counter's setup would answer: a
 * cycle counter 0; a counter that may count cycles (a TSC of unknown rate,
 * default-perfevent) or a timer whose multiplier it finds 100; a counter
 * of known rate (an OS clock, the TSC where CPUID states its rate) or a
 * 32-bit one 300. */
START_TEST(penalties_by_kind)
{
  struct choice c;
  fakes[0].steps[0] = 8;
  fakes[0].info.kind = COUNTER_ONCORE;
  select_among(1, 0, &c);
  ck_assert_int_eq(c.precision, 8);

  fakes_reset();
  fakes[0].steps[0] = 30;
  fakes[0].info.kind = COUNTER_OFFCORE;
  select_among(1, 0, &c);
  ck_assert_int_eq(c.precision, 130);

  fakes_reset();
  fakes[0].steps[0] = 50;
  fakes[0].info.kind = COUNTER_PERFEVENT;
  select_among(1, 0, &c);
  ck_assert_int_eq(c.precision, 150);

  /* a 24 MHz timer at 2.4 GHz: one tick is 100 cycles, + 100 */
  fakes_reset();
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.frequency = 24000000LL;
  select_among(1, 0, &c);
  ck_assert_int_eq(c.precision, 200);

  /* a TSC whose rate CPUID states, here the CPU's: 20 ticks + 300 */
  fakes_reset();
  fakes[0].steps[0] = 20;
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.frequency = PERSECOND;
  fakes[0].info.frequency_exact = 1;
  select_among(1, 0, &c);
  ck_assert_int_eq(c.precision, 320);

  /* 25 ns steps of a nanosecond clock at 2.4 GHz: 60 cycles + 300 */
  fakes_reset();
  fakes[0].steps[0] = 25;
  fakes[0].info.kind = COUNTER_OSCLOCK;
  fakes[0].info.frequency = 1000000000LL;
  select_among(1, 0, &c);
  ck_assert_int_eq(c.precision, 360);
  ck_assert(c.scaling > 2.3999 && c.scaling < 2.4001);
  /* the scaled step truncated, as libcpucycles' differences of truncated
   * scaled reads give it: 27 ns = 64.8 cycles, 64 */
  fakes_reset();
  fakes[0].steps[0] = 27;
  fakes[0].info.kind = COUNTER_OSCLOCK;
  fakes[0].info.frequency = 1000000000LL;
  select_among(1, 0, &c);
  ck_assert_int_eq(c.precision, 364);
  /* and at least 1: a 24 GHz timer's tick is 0.1 cycle */
  fakes_reset();
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.frequency = 24000000000LL;
  select_among(1, 0, &c);
  ck_assert_int_eq(c.precision, 101);

  /* a 32-bit cycle counter, extended by the library: + 300 */
  fakes_reset();
  fakes[0].steps[0] = 4;
  fakes[0].info.only32 = 1;
  select_among(1, 0, &c);
  ck_assert_int_eq(c.precision, 304);
}
END_TEST

START_TEST(oncore_beats_less_noisy_tsc)
{
  struct choice c;
  fakes[0].info.kind = COUNTER_OFFCORE; /* a TSC: steps of 20 */
  fakes[0].steps[0] = 20;
  fakes[1].info.kind = COUNTER_ONCORE;  /* on-core, noisier: steps of 40+ */
  fakes[1].steps[0] = 40;
  fakes[1].steps[1] = 64;
  fakes[1].nsteps = 2;
  ck_assert_int_eq(select_among(2, 0, &c), 1);
  ck_assert_int_eq(c.precision, 50);  /* 40, + 10: the second that works */
  ck_assert_int_eq(fakes[0].releases, 1);
  ck_assert_int_eq(fakes[1].releases, 0);
}
END_TEST

START_TEST(scaled_counter_must_fit_frequency)
{
  struct choice c;
  /* 2.4 GHz over 72 MHz is 33.33...: no k/2^j (j <= 10) within 0.2 */
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.frequency = 72000000LL;
  /* the same mismatch is accepted for an OS clock */
  fakes[1].info.kind = COUNTER_OSCLOCK;
  fakes[1].info.frequency = 72000000LL;
  fakes[1].steps[0] = 1000;
  ck_assert_int_eq(select_among(2, 0, &c), 1);
  ck_assert_int_eq(fakes[0].setups, 1);
  ck_assert_int_eq(fakes[0].releases, 1);
}
END_TEST

/* A rate the architecture states (s390x's TOD clock, CPUID's invariant
 * TSC) is scaled whatever the ratio, as libcpucycles does: 5.2 GHz over
 * 4.096 GHz (a z15) fits no k/2^j, and the counter is kept. */
START_TEST(exact_frequency_is_scaled_whatever_the_ratio)
{
  struct choice c;
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.frequency = 4096000000LL;
  fakes[0].info.frequency_exact = 1;
  fakes[0].steps[0] = 16;
  ck_assert_int_eq(cpucycles_select(table, 1, 5200000000LL, 0, 0, 0, &c), 0);
  ck_assert(c.scaling > 1.2695 && c.scaling < 1.2696);
  ck_assert_int_eq(c.precision, 20 + 300);  /* 16 ticks x 1.2695, rounded */
  /* the same timer without the flag is a timer whose multiplier
   * libcpucycles finds: 1.2695 x 4 = 5.08 is within 0.2 of 5, so it is
   * kept, with the exact ratio and the timer's penalty */
  fakes_reset();
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.frequency = 4096000000LL;
  fakes[0].steps[0] = 16;
  ck_assert_int_eq(cpucycles_select(table, 1, 5200000000LL, 0, 0, 0, &c), 0);
  ck_assert(c.scaling > 1.2695 && c.scaling < 1.2696);
  ck_assert_int_eq(c.precision, 20 + 100);
  /* and one that no k/2^j fits is dropped: 5.2 GHz over 156 MHz is 33.33 */
  fakes_reset();
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.frequency = 156000000LL;
  ck_assert_int_eq(cpucycles_select(table, 1, 5200000000LL, 0, 0, 0, &c), -1);
}
END_TEST

START_TEST(scaled_counter_that_fits_is_kept)
{
  struct choice c;
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.frequency = 24000000LL; /* 2.4 GHz = 100 x 24 MHz */
  ck_assert_int_eq(select_among(1, 0, &c), 0);
  ck_assert(c.scaling > 99.99 && c.scaling < 100.01);
  ck_assert_int_eq(c.precision, 200);
}
END_TEST

/* persecond / frequency for a timer: kept when some k/2^j, j from 0 to
 * 10, is within 0.2 of it times 2^j (libcpucycles' multiplier search), and
 * then scaled by the exact ratio, not by k/2^j. */
static double ratio_scaling(long long persecond, long long frequency)
{
  struct counter_info i = { .kind = COUNTER_OFFCORE };
  i.frequency = frequency;
  return cpucycles_scaling_of(&i, persecond);
}

static int exactly(double scaling, double ratio)
{
  double d = scaling - ratio;
  return d < 1e-12 && d > -1e-12;
}

START_TEST(scaling_ratio_rules)
{
  struct counter_info i = { .kind = COUNTER_OFFCORE };
  ck_assert(cpucycles_scaling_of(&i, PERSECOND) == 1.0);
  /* the ratios of today's timers, which libcpucycles keeps */
  /* a 1 GHz generic timer (ARMv8.6) at 2.8 GHz: 2.8 x 4 = 11.2, 11/4 */
  ck_assert(exactly(ratio_scaling(2800000000LL, 1000000000LL), 2.8));
  /* 1.05 GHz at 2.6 GHz: 2.476 x 2 = 4.95, 5/2 */
  ck_assert(exactly(ratio_scaling(2600000000LL, 1050000000LL), 2600.0 / 1050.0));
  /* a 512 MHz POWER time base at 3.8 GHz: 7.42 x 2 = 14.84, 15/2 */
  ck_assert(exactly(ratio_scaling(3800000000LL, 512000000LL), 3800.0 / 512.0));
  /* at 2.166 GHz: 4.23 x 4 = 16.92, 17/4 */
  ck_assert(exactly(ratio_scaling(2166000000LL, 512000000LL), 2166.0 / 512.0));
  /* qemu-aarch64's 62.5 MHz timer on a 2.6 GHz host: 41.6 x 4 = 166.4, no;
   * x 8 = 332.8, 333/8 */
  ck_assert(exactly(ratio_scaling(2600000000LL, 62500000LL), 41.6));
  /* the classics */
  ck_assert(exactly(ratio_scaling(2064000000LL, 24000000LL), 86.0));
  ck_assert(exactly(ratio_scaling(2399987654LL, 24000000LL), 2399987654.0 / 24000000.0));
  ck_assert(exactly(ratio_scaling(2399987654LL, 19200000LL), 2399987654.0 / 19200000.0));
  ck_assert(exactly(ratio_scaling(2399987654LL, 25000000LL), 2399987654.0 / 25000000.0));
  ck_assert(exactly(ratio_scaling(1010000000LL, 1000000000LL), 1.01));
  /* a timer faster than the CPU: 0.1 x 8 = 0.8, within 0.2 of 1 */
  ck_assert(exactly(ratio_scaling(100000000LL, 1000000000LL), 0.1));
  /* thirds never come within 0.2 of an integer, whatever 2^j: 800 MHz
   * (an idle frequency sample) over a 24 MHz timer, and the like */
  ck_assert(ratio_scaling(800000000LL, 24000000LL) < 0);    /* 33.333... */
  ck_assert(ratio_scaling(2000000000LL, 24000000LL) < 0);   /* 83.333... */
  ck_assert(ratio_scaling(1024000000LL, 19200000LL) < 0);   /* 53.333... */
  ck_assert(ratio_scaling(2400000000LL, 72000000LL) < 0);   /* 33.333... */
  /* ratios below 0.2 times every 2^j up to 1024: no k >= 1 */
  ck_assert(ratio_scaling(100000000LL, 1000000000000LL) < 0); /* 1/10000 */
  /* an OS clock is scaled whatever the ratio */
  i.kind = COUNTER_OSCLOCK;
  i.frequency = 24000000;
  ck_assert(exactly(cpucycles_scaling_of(&i, 800000000LL), 800.0 / 24.0));
  i.frequency = -5;
  ck_assert(cpucycles_scaling_of(&i, PERSECOND) < 0);
}
END_TEST

/* A timer of unknown rate: libcpucycles' multiplier search over measured
 * cycles per tick, k/2^j for the first 2^j (up to 1024) that brings every
 * estimate within 0.2 of one integer k. */
START_TEST(multiplier_search_rules)
{
  double e[3];
  e[0] = 99.93; e[1] = 100.05; e[2] = 100.1;    /* 100 */
  ck_assert(cpucycles_multiplier_of(e, 3) == 100.0);
  e[0] = 7.42; e[1] = 7.43; e[2] = 7.41;        /* x 2: 14.84.. near 15 */
  ck_assert(cpucycles_multiplier_of(e, 3) == 7.5);
  e[0] = 4.23; e[1] = 4.231; e[2] = 4.229;      /* x 4: 16.92 near 17 */
  ck_assert(cpucycles_multiplier_of(e, 3) == 4.25);
  e[0] = 33.33; e[1] = 33.34; e[2] = 33.335;    /* thirds: never */
  ck_assert(cpucycles_multiplier_of(e, 3) < 0);
  e[0] = 2.0; e[1] = 2.5; e[2] = 3.0;           /* estimates disagree */
  ck_assert(cpucycles_multiplier_of(e, 3) < 0);
  e[0] = 0.0001; e[1] = 0.0001; e[2] = 0.0001;  /* x 1024 still 0.1: no k */
  ck_assert(cpucycles_multiplier_of(e, 3) < 0);
}
END_TEST

/* The denominators end at 2^10, for measured estimates and stated rates
 * alike (one fit): 341/2^9 and 341/2^10 come within 0.2 of no integer
 * times a smaller 2^j, and are kept; 683/2^11 needs 2^11 and is
 * dropped.  A limit of 2^8 fails the first two, one of 2^11 or more the
 * third. */
START_TEST(multiplier_denominators_end_at_1024)
{
  double e[3];
  e[0] = e[1] = e[2] = 341.0 / 512;
  ck_assert(cpucycles_multiplier_of(e, 3) == 341.0 / 512);
  /* 341.15/512 fits at 2^9 only (x 1024: 682.3, 0.3 from 682), as in
   * libcpucycles: a fit that skips 2^9 drops the timer */
  e[0] = e[1] = e[2] = 341.15 / 512;
  ck_assert(cpucycles_multiplier_of(e, 3) == 341.0 / 512);
  e[0] = e[1] = e[2] = 341.0 / 1024;
  ck_assert(cpucycles_multiplier_of(e, 3) == 341.0 / 1024);
  e[0] = e[1] = e[2] = 683.0 / 2048;
  ck_assert(cpucycles_multiplier_of(e, 3) < 0);
  ck_assert(exactly(ratio_scaling(341000000LL, 512000000LL), 341.0 / 512));
  ck_assert(exactly(ratio_scaling(341000000LL, 1024000000LL), 341.0 / 1024));
  ck_assert(ratio_scaling(683000000LL, 2048000000LL) < 0);
}
END_TEST

/* One fit for both: a ratio exactly 0.2 from an integer times 2^10 in
 * exact arithmetic, which its nearest double puts just beyond 0.2
 * (3.413 GHz over 2.56 GHz = 1.333203125, x 1024 = 1365.2, and within
 * 0.2 of nothing with a smaller 2^j), is kept, as libcpucycles' "more
 * than 0.2 away" keeps it, by the fit of measured estimates as by that
 * of stated rates. */
START_TEST(multiplier_fit_is_one_rule)
{
  double e[3];
  double r = 3413000000.0 / 2560000000.0;
  e[0] = e[1] = e[2] = r;
  ck_assert(cpucycles_multiplier_of(e, 3) == 1365.0 / 1024);
  ck_assert(exactly(ratio_scaling(3413000000LL, 2560000000LL), r));
}
END_TEST

/* The measurement against a clock that advances 1 us a call: a reading
 * (clock, timer, clock) takes 2 us and moves the timer one step, so the
 * estimate is exact. */
static long long fake_usec;
static long long fake_clock(void) { return ++fake_usec; }
static long long timer_value, timer_step;
static long long fake_timer(void) { return timer_value += timer_step; }

START_TEST(multiplier_measured_against_the_clock)
{
  double first;
  cpucycles_multiplier_set_clock(fake_clock);
  timer_step = 48;                 /* 24 ticks a us: 100 cycles a tick */
  ck_assert(cpucycles_multiplier_measure(fake_timer, PERSECOND, &first) == 100.0);
  ck_assert(first == 100.0);
  timer_step = 1920;               /* 2.5 */
  ck_assert(cpucycles_multiplier_measure(fake_timer, PERSECOND, 0) == 2.5);
  timer_step = 144;                /* 33.33: dropped */
  ck_assert(cpucycles_multiplier_measure(fake_timer, PERSECOND, &first) < 0);
  ck_assert(first > 33.33 && first < 33.34);
  timer_step = 0;                  /* stuck: given up after a clock second */
  ck_assert(cpucycles_multiplier_measure(fake_timer, PERSECOND, &first) < 0);
  ck_assert(first == 0);
  timer_step = -5;                 /* backwards */
  ck_assert(cpucycles_multiplier_measure(fake_timer, PERSECOND, 0) < 0);
  cpucycles_multiplier_set_clock(0);
}
END_TEST

/* A clock that does not answer (both system calls refused by a filter):
 * no estimate, and no endless wait for a clock that never moves. */
static long long refused_clock(void) { return -1; }

START_TEST(multiplier_gives_up_without_a_clock)
{
  double first = 1;
  cpucycles_multiplier_set_clock(refused_clock);
  timer_step = 48;
  ck_assert(cpucycles_multiplier_measure(fake_timer, PERSECOND, &first) < 0);
  ck_assert(first == 0);
  cpucycles_multiplier_set_clock(0);
}
END_TEST

START_TEST(ties_go_to_the_earlier_counter)
{
  struct choice c;
  fakes[0].steps[0] = 10;
  fakes[1].steps[0] = 10;
  fakes[2].steps[0] = 10;
  ck_assert_int_eq(select_among(3, 0, &c), 0);
  ck_assert_int_eq(fakes[1].releases, 1);
  ck_assert_int_eq(fakes[2].releases, 1);
}
END_TEST

/* Two counters that tie within noise (smallest steps anywhere from 1 to
 * 9, differing from probe to probe): the earlier one, every time, as
 * libcpucycles' order bump makes it: the second counter that works has
 * 10 added to its precision. */
START_TEST(ties_within_noise_go_to_the_earlier_counter_every_time)
{
  struct choice c;
  unsigned int seed = 12345;
  int k, j, earlier = 0;
  for (k = 0; k < 1000; k++) {
    fakes_reset();
    for (j = 0; j < 2; j++) {
      int s;
      fakes[j].info.kind = COUNTER_OFFCORE;
      fakes[j].nsteps = 4;
      for (s = 0; s < 4; s++) {
        seed = seed * 1103515245u + 12345u;
        fakes[j].steps[s] = 1 + (long long) ((seed >> 16) % 9);
      }
    }
    if (select_among(2, 0, &c) == 0) earlier++;
  }
  ck_assert_int_eq(earlier, 1000);
}
END_TEST

static long long traced_precision[FAKE_SLOTS + 2];
static double traced_scaling[FAKE_SLOTS + 2];
static int traced_only32[FAKE_SLOTS + 2];
static const char *traced_name[FAKE_SLOTS + 2];
static int traced;

static void record(const struct probe_report *r, void *arg)
{
  int n = r->index;
  ck_assert_ptr_null(arg);
  ck_assert_int_eq(n, traced);
  ck_assert_int_le(n, FAKE_SLOTS + 1);
  traced_name[n] = r->name;
  traced_precision[n] = r->precision;
  traced_scaling[n] = r->scaling;
  traced_only32[n] = r->info.only32;
  traced++;
}

/* The report: why each counter was kept or dropped.  One more slot than
 * the fakes, for a table with a counter that was not built. */
static struct probe_report reports[FAKE_SLOTS + 2];
static int nreports;

static void keep_report(const struct probe_report *r, void *arg)
{
  ck_assert_ptr_eq(arg, &nreports);
  ck_assert_int_eq(r->index, nreports);
  ck_assert_int_le(nreports, FAKE_SLOTS + 1);
  reports[nreports++] = *r;
}

/* A timer that ticks with the clock (24 MHz at 2.4 GHz: 100), and a
 * clock that jumps 5 ms right after the first reading of the timer, as
 * when the measuring thread is descheduled between reading the timer and
 * reading the clock: that reading is taken again, and the estimates stay
 * exact (without, the first estimate is 20% low and the timer dropped). */
static long long hiccup_usec;
static int hiccup_calls;
static long long hiccup_clock(void)
{
  if (++hiccup_calls == 2) hiccup_usec += 5000;
  return ++hiccup_usec;
}
static long long timer_on_the_clock(void) { return hiccup_usec * 24; }

START_TEST(multiplier_measurement_survives_a_descheduled_thread)
{
  double first;
  cpucycles_multiplier_set_clock(hiccup_clock);
  ck_assert(cpucycles_multiplier_measure(timer_on_the_clock, PERSECOND, &first) == 100.0);
  ck_assert(first > 99.99 && first < 100.01);
  cpucycles_multiplier_set_clock(0);
}
END_TEST

/* The probe measures a timer of unknown rate, scales it by the multiplier
 * found (k/2^j), and drops it when there is none. */
START_TEST(timer_of_unknown_rate_is_measured)
{
  struct choice c;
  nreports = 0;
  cpucycles_multiplier_set_clock(fake_clock);
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.rate_unknown = 1;
  fakes[0].steps[0] = 100;         /* 100 ticks a reading of 2 us: 48 */
  ck_assert_int_eq(cpucycles_select(table, 1, PERSECOND, 0, keep_report, &nreports, &c), 0);
  ck_assert(c.scaling == 48.0);
  ck_assert_int_eq(c.precision, 4800 + 100);
  ck_assert(reports[0].ratio == 48.0);
  fakes_reset();
  nreports = 0;
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.rate_unknown = 1;
  fakes[0].steps[0] = 144;         /* 33.33 */
  ck_assert_int_eq(cpucycles_select(table, 1, PERSECOND, 0, keep_report, &nreports, &c), -1);
  ck_assert_int_eq(reports[0].outcome, PROBE_MISFIT);
  ck_assert(reports[0].ratio > 33.33 && reports[0].ratio < 33.34);
  cpucycles_multiplier_set_clock(0);
}
END_TEST

/* A timer and a clock on one simulated time line: each clock reading
 * takes 1 us, each read of the timer 100 ns; the timer ticks at
 * timer_hz whatever rate its setup states (CNTFRQ_EL0 that firmware got
 * wrong, as qemu's cortex-a53,cntfrq=N simulates). */
static long long line_ns, timer_hz;
static long long line_clock(void) { line_ns += 1000; return line_ns / 1000; }
static long long line_timer(void)
{
  line_ns += 100;
  return (long long) ((unsigned long long) line_ns * (unsigned long long) timer_hz
                      / 1000000000ULL);
}

/* The stated rate against the clock over the sampling (a PowerPC's 2.5961
 * GHz, as in qemu's reports).  One setup, one report each. */
static void probe_stated_timer(long long stated_hz, long long ticking_hz)
{
  struct choice c;
  line_ns = 0;
  timer_hz = ticking_hz;
  cpucycles_multiplier_set_clock(line_clock);
  fakes_reset();
  fake_counters[0].read = line_timer;
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.frequency = stated_hz;
  nreports = 0;
  cpucycles_select(table, 1, 2596100000LL, 0, keep_report, &nreports, &c);
  ck_assert_int_eq(nreports, 2);
}

/* ... where the timer works: the verdict, and the rate the clock saw. */
static void assert_rate_check(long long stated_hz, long long ticking_hz,
                              enum rate_verdict verdict)
{
  probe_stated_timer(stated_hz, ticking_hz);
  ck_assert_int_eq(reports[0].outcome, PROBE_WORKS);
  ck_assert_int_eq(reports[0].rate.verdict, verdict);
  ck_assert_int_eq(reports[0].rate.stated, stated_hz);
  ck_assert(reports[0].rate.seen > 0.95 * (double) ticking_hz
            && reports[0].rate.seen < 1.05 * (double) ticking_hz);
}

/* CNTFRQ_EL0 right (62.5 MHz): the stated rate stands, scaled exactly
 * (persecond / 62.5 MHz, not the measured multiplier's 41.5). */
START_TEST(stated_rate_that_agrees_with_the_clock_is_used)
{
  assert_rate_check(62500000LL, 62500000LL, RATE_AGREES);
  ck_assert(!reports[0].info.rate_unknown);
  ck_assert_int_eq(reports[0].info.frequency, 62500000LL);
  ck_assert(reports[0].scaling == 2596100000.0 / 62500000.0);
}
END_TEST

/* CNTFRQ_EL0 says 62.5 MHz, the timer ticks at 10 MHz: the stated rate is
 * not used; the multiplier is measured as libcpucycles measures it,
 * 259.61 fitting 2077/8, and the timer keeps a timer's penalty. */
START_TEST(stated_rate_that_disagrees_with_the_clock_is_measured)
{
  assert_rate_check(62500000LL, 10000000LL, RATE_DISAGREES);
  ck_assert(reports[0].info.rate_unknown);
  ck_assert_int_eq(reports[0].info.frequency, 0);
  ck_assert(reports[0].scaling == 2077.0 / 8);
  ck_assert(reports[0].ratio > 259.5 && reports[0].ratio < 259.7);
  ck_assert_int_eq(reports[0].precision, 259 + 100); /* a tick a read */
  /* 1 MHz: 2596.1, within 0.2 of 2596 */
  assert_rate_check(62500000LL, 1000000LL, RATE_DISAGREES);
  ck_assert(reports[0].scaling == 2596.0);
}
END_TEST

/* A timer at 1 kHz stated as 62.5 MHz moves a tick or two over the
 * sampling: where the sampling sees it move, the stated rate would give
 * it a fine precision and readings that stand still; the check drops it
 * (too slow to measure, as libcpucycles never keeps it). */
START_TEST(stated_rate_of_a_crawling_timer_is_not_believed)
{
  probe_stated_timer(62500000LL, 1000LL);
  ck_assert_int_ne(reports[0].outcome, PROBE_WORKS);
  if (reports[0].outcome == PROBE_MISFIT)
    ck_assert_int_eq(reports[0].rate.verdict, RATE_DISAGREES);
  ck_assert_str_eq(reports[1].name, "default-zero");
}
END_TEST

/* Without a clock (both refused by a filter) nothing can be checked: the
 * stated rate stands, as before the check. */
START_TEST(stated_rate_stands_without_a_clock)
{
  struct choice c;
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.frequency = 62500000LL;
  nreports = 0;
  ck_assert_int_eq(cpucycles_select(table, 1, 2596100000LL, 0, keep_report, &nreports, &c), 0);
  ck_assert_int_eq(reports[0].rate.verdict, RATE_NOT_CHECKED);
  ck_assert(c.scaling == 2596100000.0 / 62500000.0);
  ck_assert(!c.info.rate_unknown);
}
END_TEST

/* An OS clock's rate is its resolution, not a claim to check. */
START_TEST(os_clock_rate_is_not_checked)
{
  line_ns = 0;
  timer_hz = 1000LL;
  cpucycles_multiplier_set_clock(line_clock);
  fake_counters[0].read = line_timer;
  fakes[0].info.kind = COUNTER_OSCLOCK;
  fakes[0].info.frequency = 1000000000LL;
  nreports = 0;
  {
    struct choice c;
    cpucycles_select(table, 1, 2596100000LL, 0, keep_report, &nreports, &c);
  }
  ck_assert_int_eq(reports[0].rate.stated, 0);
  ck_assert_int_eq(reports[0].rate.verdict, RATE_NOT_CHECKED);
}
END_TEST

/* The bump counts the counters that work, in order: one that is dropped
 * adds nothing; the trace prints the bumped precisions. */
START_TEST(order_bump_counts_working_counters)
{
  struct choice c;
  int i;
  for (i = 0; i < 4; i++) fakes[i].steps[0] = 5;
  fakes[1].failure = FAKE_READ_SIGILL;
  traced = 0;
  ck_assert_int_eq(cpucycles_select(table, 4, PERSECOND, 0, record, 0, &c), 0);
  ck_assert_int_eq(traced, 5);
  ck_assert_int_eq(traced_precision[0], 5);
  ck_assert_int_eq(traced_precision[1], 0);
  ck_assert_int_eq(traced_precision[2], 15);
  ck_assert_int_eq(traced_precision[3], 25);
  ck_assert_int_eq(c.precision, 5);
  /* a later counter must be better by more than its bump to win */
  fakes_reset();
  fakes[0].steps[0] = 20;
  fakes[1].steps[0] = 11;   /* 21 */
  fakes[2].steps[0] = 1;    /* 21 */
  ck_assert_int_eq(select_among(3, 0, &c), 0);
  fakes_reset();
  fakes[0].steps[0] = 20;
  fakes[1].steps[0] = 9;    /* 19 */
  ck_assert_int_eq(select_among(2, 0, &c), 1);
  ck_assert_int_eq(c.precision, 19);
}
END_TEST

/* A counter whose penalty alone cannot win is not sampled; but whether it
 * works decides the bump of the counters after it, so the choice must be
 * the one a probe that samples everything (the trace) makes. */
static void slow_clock_then_perf_event(int clock_works)
{
  fakes_reset();
  fakes[0].info.kind = COUNTER_OFFCORE;      /* 5 ticks + 300: 305 */
  fakes[0].info.frequency = PERSECOND;
  fakes[0].info.frequency_exact = 1;
  fakes[0].steps[0] = 5;
  fakes[1].info.kind = COUNTER_OSCLOCK;      /* 300 + 10: cannot win */
  fakes[1].info.frequency = PERSECOND;
  if (!clock_works) fakes[1].failure = FAKE_READ_SIGILL;
  fakes[2].info.kind = COUNTER_PERFEVENT;    /* 185 + 100 + 10 or 20 */
  fakes[2].steps[0] = 185;
}

START_TEST(counter_not_sampled_still_counts_in_the_bump)
{
  struct choice c;
  /* the clock works: the event's precision is 305, a tie, lost */
  slow_clock_then_perf_event(1);
  ck_assert_int_eq(select_among(3, 0, &c), 0);
  ck_assert_int_eq(c.precision, 305);
  slow_clock_then_perf_event(1);
  traced = 0;
  ck_assert_int_eq(cpucycles_select(table, 3, PERSECOND, 0, record, 0, &c), 0);
  ck_assert_int_eq(traced_precision[0], 305);
  ck_assert_int_eq(traced_precision[1], 311);
  ck_assert_int_eq(traced_precision[2], 305);
  /* the clock fails: the event's precision is 295, and it wins */
  slow_clock_then_perf_event(0);
  ck_assert_int_eq(select_among(3, 0, &c), 2);
  ck_assert_int_eq(c.precision, 295);
  slow_clock_then_perf_event(0);
  traced = 0;
  ck_assert_int_eq(cpucycles_select(table, 3, PERSECOND, 0, record, 0, &c), 2);
  ck_assert_int_eq(traced_precision[1], 0);
  ck_assert_int_eq(traced_precision[2], 295);
}
END_TEST

/* The probe that starts again finds nothing this time (every counter
 * refuses its second setup): default-zero, not the counter of the first
 * round, which was released. */
START_TEST(probe_started_again_may_end_with_default_zero)
{
  struct choice c;
  slow_clock_then_perf_event(1);
  fakes[0].failure = FAKE_WORKS_ONCE;
  fakes[1].failure = FAKE_WORKS_ONCE;
  fakes[2].failure = FAKE_WORKS_ONCE;
  fakes[2].steps[0] = 100;                    /* 210: would win */
  ck_assert_int_eq(select_among(3, 0, &c), -1);
  ck_assert_str_eq(c.counter->name, "default-zero");
  ck_assert_int_eq(fakes[0].setups, 2);
  ck_assert_int_eq(fakes[0].releases, 2);
}
END_TEST

/* A counter of libcpucycles' list for the ISA that was not built here (no
 * setup): a dropped line at its index, never run, no bump; naming it
 * probes the others. */
static const struct counter not_built = { "fake-not-built", 0, 0, 0, 0, COUNTER_TRIES };

START_TEST(counter_not_built_is_a_dropped_line_at_its_index)
{
  struct choice c;
  const struct counter *list[3];
  struct probe_report r[4];
  list[0] = &fake_counters[0];
  list[1] = &not_built;
  list[2] = &fake_counters[1];
  fakes[0].steps[0] = 20;
  fakes[1].steps[0] = 3;
  nreports = 0;
  ck_assert_int_eq(cpucycles_select(list, 3, PERSECOND, 0, keep_report,
                                    &nreports, &c), 2);
  ck_assert_int_eq(nreports, 4);
  memcpy(r, reports, sizeof r);
  ck_assert_str_eq(r[1].name, "fake-not-built");
  ck_assert_int_eq(r[1].index, 1);
  ck_assert_int_eq(r[1].outcome, PROBE_NOT_BUILT);
  ck_assert_int_eq(r[1].precision, 0);
  ck_assert(r[1].scaling == 0);
  ck_assert_int_eq(r[1].info.only32, 0);
  ck_assert_int_eq(r[2].precision, 13);   /* 3 + 10: the second that works */
  ck_assert_str_eq(r[3].name, "default-zero");
  ck_assert_int_eq(r[3].index, 3);
  /* without a trace, and named */
  fakes_reset();
  fakes[0].steps[0] = 20;
  fakes[1].steps[0] = 3;
  ck_assert_int_eq(cpucycles_select(list, 3, PERSECOND, "fake-not-built", 0, 0, &c), 2);
  ck_assert_str_eq(c.counter->name, "fake-1");
  ck_assert_int_eq(fakes[0].setups, 1);
}
END_TEST

/* Traces libcpucycles' documentation publishes (counters.md, "Examples"),
 * replayed: fakes with the steps those machines measured, the choice
 * libcpucycles printed.  cfarm29, POWER9, 20260105: a 512 MHz time base at
 * 3.8 GHz (7.42: kept, 15/2), default-perfevent, default-mach not built,
 * default-monotonic; libcpucycles printed 220, 367, 0, 419 and chose
 * ppc64-mftb (our scaling is the exact 7.421875: 218). */
START_TEST(published_trace_power9)
{
  struct choice c;
  const struct counter *list[4];
  static const struct counter mach = { "default-mach", 0, 0, 0, 0, COUNTER_TRIES };
  list[0] = &fake_counters[0];
  list[1] = &fake_counters[1];
  list[2] = &mach;
  list[3] = &fake_counters[2];
  fakes[0].info.kind = COUNTER_OFFCORE;       /* ppc64-mftb: 16 ticks */
  fakes[0].info.frequency = 512000000LL;
  fakes[0].steps[0] = 16;
  fakes[1].info.kind = COUNTER_PERFEVENT;     /* default-perfevent */
  fakes[1].steps[0] = 257;
  fakes[2].info.kind = COUNTER_OSCLOCK;       /* default-monotonic: 26 ns */
  fakes[2].info.frequency = 1000000000LL;
  fakes[2].steps[0] = 26;
  nreports = 0;
  ck_assert_int_eq(cpucycles_select(list, 4, 3800000000LL, 0, keep_report, &nreports, &c), 0);
  ck_assert_int_eq(reports[0].precision, 218);
  ck_assert_int_eq(reports[1].precision, 367);
  ck_assert_int_eq(reports[2].precision, 0);
  ck_assert_int_eq(reports[3].precision, 418);
}
END_TEST

/* cfarm110, POWER7, 20260105: 512 MHz at 3.55 GHz (6.93: kept, 7/1);
 * libcpucycles printed 212, 236, 0, 465 and chose ppc64-mftb. */
START_TEST(published_trace_power7)
{
  struct choice c;
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.frequency = 512000000LL;
  fakes[0].steps[0] = 16;
  fakes[1].info.kind = COUNTER_PERFEVENT;
  fakes[1].steps[0] = 126;
  fakes[2].info.kind = COUNTER_OSCLOCK;
  fakes[2].info.frequency = 1000000000LL;
  fakes[2].steps[0] = 41;
  nreports = 0;
  ck_assert_int_eq(cpucycles_select(table, 3, 3550000000LL, 0, keep_report, &nreports, &c), 0);
  ck_assert_int_eq(reports[0].precision, 210);
  ck_assert_int_eq(reports[1].precision, 236);
  ck_assert_int_eq(reports[2].precision, 465);
}
END_TEST

/* berry2, Cortex-A7, 20251226 (before the bump): arm32-cortex with user
 * access (32-bit: 10 + 300), arm32-1176 dropped, default-perfevent 154 +
 * 100, default-monotonic 514 + 300 at 900 MHz; libcpucycles chose
 * default-perfevent (and does with the bump: 264 against 310). */
START_TEST(published_trace_cortex_a7)
{
  struct choice c;
  fakes[0].info.only32 = 1;                   /* arm32-cortex */
  fakes[0].steps[0] = 10;
  fakes[1].failure = FAKE_READ_SIGILL;        /* arm32-1176 */
  fakes[2].info.kind = COUNTER_PERFEVENT;
  fakes[2].steps[0] = 154;
  fakes[3].info.kind = COUNTER_OSCLOCK;
  fakes[3].info.frequency = 1000000000LL;
  fakes[3].steps[0] = 572;                    /* 514.8 cycles */
  nreports = 0;
  ck_assert_int_eq(cpucycles_select(table, 4, 900000000LL, 0, keep_report, &nreports, &c), 2);
  ck_assert_int_eq(reports[0].precision, 310);
  ck_assert_int_eq(reports[2].precision, 264);
  ck_assert_int_eq(reports[3].precision, 834);
}
END_TEST

START_TEST(everything_failing_leaves_default_zero)
{
  struct choice c;
  fakes[0].failure = FAKE_READ_SIGILL;
  fakes[1].failure = FAKE_NEVER_MOVES;
  fakes[2].failure = FAKE_SETUP_REFUSES;
  fakes[3].failure = FAKE_DECREASES;
  fakes[3].bad_attempts = SELECT_ATTEMPTS;
  ck_assert_int_eq(select_among(4, 0, &c), -1);
  ck_assert_str_eq(c.counter->name, "default-zero");
  ck_assert_int_eq(c.counter->read(), 0);
}
END_TEST

START_TEST(empty_table_leaves_default_zero)
{
  struct choice c;
  ck_assert_int_eq(select_among(0, 0, &c), -1);
  ck_assert_str_eq(c.counter->name, "default-zero");
}
END_TEST

START_TEST(named_counter_is_used_without_probing_others)
{
  struct choice c;
  fakes[2].steps[0] = 500;  /* worse than the others */
  ck_assert_int_eq(select_among(3, "fake-2", &c), 2);
  ck_assert_int_eq(fakes[0].setups, 0);
  ck_assert_int_eq(fakes[1].setups, 0);
  ck_assert_int_eq(c.precision, 500);
}
END_TEST

START_TEST(named_counter_that_fails_falls_back_to_probe)
{
  struct choice c;
  fakes[2].failure = FAKE_READ_SIGILL;
  fakes[1].steps[0] = 3;     /* 3 + 10 */
  fakes[0].steps[0] = 15;
  ck_assert_int_eq(select_among(3, "fake-2", &c), 1);
  ck_assert_int_eq(fakes[2].releases, 2);
}
END_TEST

START_TEST(unknown_name_falls_back_to_probe)
{
  struct choice c;
  fakes[1].steps[0] = 1;     /* 1 + 10 */
  fakes[0].steps[0] = 12;
  ck_assert_int_eq(select_among(2, "fake-9", &c), 1);
  ck_assert_int_eq(select_among(2, "", &c), 1);
  ck_assert_int_eq(select_among(2, "fake-1x", &c), 1);
}
END_TEST

/* libcpucycles' trace: every counter in table order, a dropped one with
 * precision 0 and no scaling, then default-zero last. */
START_TEST(trace_reports_every_counter)
{
  struct choice c;
  traced = 0;
  fakes[0].failure = FAKE_READ_SIGILL;
  fakes[1].steps[0] = 7;
  fakes[2].info.only32 = 1;
  fakes[2].steps[0] = 3;
  fakes[3].failure = FAKE_SETUP_REFUSES;
  ck_assert_int_eq(cpucycles_select(table, 4, PERSECOND, 0, record, 0, &c), 1);
  ck_assert_int_eq(traced, 5);
  ck_assert_str_eq(traced_name[0], "fake-0");
  ck_assert_int_eq(traced_precision[0], 0);
  ck_assert_int_eq(traced_precision[1], 7);
  ck_assert(traced_scaling[1] == 1.0);
  ck_assert_int_eq(traced_precision[2], 313); /* 3 + 300 (32 bits) + 10 */
  ck_assert_int_eq(traced_only32[2], 1);
  ck_assert_int_eq(traced_precision[3], 0);
  ck_assert(traced_scaling[3] == 0);
  ck_assert_str_eq(traced_name[4], "default-zero");
  ck_assert_int_eq(traced_precision[4], 0);
  ck_assert(traced_scaling[4] == 0);
  ck_assert_int_eq(traced_only32[4], 0);
}
END_TEST

/* A scaled counter dropped by the k/2^j test shows scaling 0, not -1. */
START_TEST(trace_of_a_misfit_scaled_counter)
{
  struct choice c;
  traced = 0;
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.frequency = 72000000LL;  /* 33.33: no fit */
  cpucycles_select(table, 1, PERSECOND, 0, record, 0, &c);
  ck_assert_int_eq(traced, 2);
  ck_assert_int_eq(traced_precision[0], 0);
  ck_assert(traced_scaling[0] == 0);
}
END_TEST

/* Tracing with a name: every counter is still measured and traced, and
 * the named one is still the choice, even when another is better. */
START_TEST(trace_with_a_name_traces_all_and_keeps_the_name)
{
  struct choice c;
  traced = 0;
  fakes[0].steps[0] = 2;
  fakes[1].steps[0] = 500;
  fakes[2].steps[0] = 1;
  ck_assert_int_eq(cpucycles_select(table, 3, PERSECOND, "fake-1", record, 0, &c), 1);
  ck_assert_int_eq(traced, 4);
  ck_assert_int_eq(traced_precision[0], 2);
  ck_assert_int_eq(traced_precision[1], 510);
  ck_assert_int_eq(traced_precision[2], 21);
  ck_assert_str_eq(c.counter->name, "fake-1");
  ck_assert_int_eq(c.precision, 510);
  ck_assert_int_eq(fakes[1].releases, 0);
  ck_assert_int_eq(fakes[0].releases, 1);
  ck_assert_int_eq(fakes[2].releases, 1);
}
END_TEST

/* CPUCYCLES_COUNTER=default-zero forces default-zero: nothing is probed;
 * with a trace, everything is measured and default-zero still chosen. */
START_TEST(default_zero_by_name)
{
  struct choice c;
  ck_assert_int_eq(select_among(2, "default-zero", &c), -1);
  ck_assert_str_eq(c.counter->name, "default-zero");
  ck_assert_int_eq(fakes[0].setups, 0);
  ck_assert_int_eq(fakes[1].setups, 0);

  fakes_reset();
  traced = 0;
  ck_assert_int_eq(cpucycles_select(table, 2, PERSECOND, "default-zero", record, 0, &c), -1);
  ck_assert_str_eq(c.counter->name, "default-zero");
  ck_assert_int_eq(traced, 3);
  ck_assert_int_eq(traced_precision[0], 1);
  ck_assert_int_eq(fakes[0].setups, 1);
  ck_assert_int_eq(fakes[0].releases, 1);
  ck_assert_int_eq(fakes[1].releases, 1);
}
END_TEST

START_TEST(only32_counter_judged_on_low_bits)
{
  struct choice c;
  /* Bits above 31 are garbage for a 32-bit counter: steps of 2^32 + 5
   * are steps of 5. */
  fakes[0].info.only32 = 1;
  fakes[0].steps[0] = 4294967296LL + 5;
  ck_assert_int_eq(select_among(1, 0, &c), 0);
  ck_assert_int_eq(c.precision, 305);
  ck_assert_int_eq(c.info.only32, 1);
}
END_TEST

static void ignore_trace(const struct probe_report *r, void *arg)
{
  (void) r; (void) arg;
}

START_TEST(hopeless_counter_not_sampled_unless_tracing)
{
  struct choice c;
  fakes[0].steps[0] = 150;              /* on-core: precision 150 */
  fakes[1].info.kind = COUNTER_OFFCORE; /* 100 + 10 < 150: sampled */
  fakes[1].steps[0] = 60;
  fakes[2].info.kind = COUNTER_OSCLOCK; /* 300 + 20 >= 150: skipped */
  fakes[2].info.frequency = 1000000000LL;
  ck_assert_int_eq(select_among(3, 0, &c), 0);
  ck_assert_int_eq(c.precision, 150);
  ck_assert_int_gt(fakes[1].reads, 0);
  ck_assert_int_eq(fakes[2].setups, 1);
  ck_assert_int_eq(fakes[2].reads, 0);
  ck_assert_int_eq(fakes[2].releases, 1);

  fakes_reset();
  fakes[0].steps[0] = 150;
  fakes[1].steps[0] = 300;
  fakes[2].info.kind = COUNTER_OSCLOCK;
  fakes[2].info.frequency = 1000000000LL;
  ck_assert_int_eq(cpucycles_select(table, 3, PERSECOND, 0, ignore_trace, 0, &c), 0);
  ck_assert_int_gt(fakes[2].reads, 0);
}
END_TEST

START_TEST(report_says_why_each_counter_was_dropped)
{
  struct choice c;
  fakes[0].failure = FAKE_SETUP_REFUSES;
  fakes[0].info.refusal = "perf_event_open";
  fakes[0].info.refusal_errno = EACCES;
  fakes[1].failure = FAKE_SETUP_SIGSEGV;
  fakes[2].failure = FAKE_READ_SIGILL;
  fakes[3].info.kind = COUNTER_OFFCORE;
  fakes[3].info.frequency = 72000000LL;  /* 33.33: no fit */
  nreports = 0;
  ck_assert_int_eq(cpucycles_select(table, 4, PERSECOND, 0, keep_report,
                                    &nreports, &c), -1);
  ck_assert_int_eq(nreports, 5);

  ck_assert_str_eq(reports[0].name, "fake-0");
  ck_assert_int_eq(reports[0].outcome, PROBE_REFUSED);
  ck_assert_str_eq(reports[0].info.refusal, "perf_event_open");
  ck_assert_int_eq(reports[0].info.refusal_errno, EACCES);
  ck_assert_int_eq(reports[0].signal, 0);

  ck_assert_int_eq(reports[1].outcome, PROBE_CRASHED);
  ck_assert_int_eq(reports[1].signal, SIGSEGV);
  ck_assert_int_eq(reports[1].stage, PROBE_IN_SETUP);
  ck_assert_ptr_null(reports[1].info.refusal);

  ck_assert_int_eq(reports[2].outcome, PROBE_CRASHED);
  ck_assert_int_eq(reports[2].signal, SIGILL);
  ck_assert_int_eq(reports[2].stage, PROBE_IN_READS);

  ck_assert_int_eq(reports[3].outcome, PROBE_MISFIT);
  ck_assert_int_eq(reports[3].info.frequency, 72000000LL);
  ck_assert_int_eq(reports[3].persecond, PERSECOND);
  ck_assert(reports[3].ratio > 33.333 && reports[3].ratio < 33.334);
  ck_assert(reports[3].scaling == 0);

  ck_assert_str_eq(reports[4].name, "default-zero");
  ck_assert_int_eq(reports[4].outcome, PROBE_FALLBACK);
  ck_assert_int_eq(reports[4].precision, 0);
}
END_TEST

START_TEST(report_of_unsteady_and_working_counters)
{
  struct choice c;
  fakes[0].failure = FAKE_NEVER_MOVES;
  fakes[1].failure = FAKE_DECREASES;
  fakes[1].bad_attempts = SELECT_ATTEMPTS;
  fakes[2].failure = FAKE_DECREASES;
  fakes[2].bad_attempts = 3;                /* steady from the 4th attempt */
  fakes[2].steps[0] = 5;
  fakes[3].info.kind = COUNTER_OFFCORE;
  fakes[3].info.frequency = 1200000000LL;  /* 2: fits */
  fakes[3].steps[0] = 1;
  nreports = 0;
  ck_assert_int_eq(cpucycles_select(table, 4, PERSECOND, 0, keep_report,
                                    &nreports, &c), 2);
  ck_assert_int_eq(nreports, 5);

  ck_assert_int_eq(reports[0].outcome, PROBE_STUCK);
  ck_assert_int_eq(reports[0].attempts, SELECT_ATTEMPTS);
  ck_assert_int_eq(reports[0].backwards, 0);

  ck_assert_int_eq(reports[1].outcome, PROBE_BACKWARDS);
  ck_assert_int_eq(reports[1].attempts, SELECT_ATTEMPTS);
  ck_assert_int_eq(reports[1].backwards, SELECT_ATTEMPTS);

  ck_assert_int_eq(reports[2].outcome, PROBE_WORKS);
  ck_assert_int_eq(reports[2].attempts, 4);
  ck_assert_int_eq(reports[2].backwards, 3);
  ck_assert_int_eq(reports[2].precision, 5);

  ck_assert_int_eq(reports[3].outcome, PROBE_WORKS);
  ck_assert_int_eq(reports[3].precision, 112);  /* 1 tick = 2 cycles + 100 + 10 */
  ck_assert(reports[3].scaling == 2.0);
  ck_assert(reports[3].ratio == 2.0);
  ck_assert_int_eq(reports[3].info.kind, COUNTER_OFFCORE);
}
END_TEST

#ifndef _WIN32
/* ---- asking instead of catching (lib/works.c, counter.h) ---- */

static const int crash_signals[] = { SIGILL, SIGFPE, SIGBUS, SIGSEGV, SIGABRT };
#define CRASH_SIGNALS ((int) (sizeof crash_signals / sizeof crash_signals[0]))

static volatile sig_atomic_t application_handler_ran;
static void application_handler(int sig)
{
  (void) sig;
  application_handler_ran = 1;
}

/* The application's state before the probe: its own handler for every
 * crash signal, SIGBUS blocked. */
static sigset_t application_mask;
static void application_state(void)
{
  struct sigaction a;
  sigset_t block;
  int i;
  memset(&a, 0, sizeof a);
  a.sa_handler = application_handler;
  sigemptyset(&a.sa_mask);
  for (i = 0; i < CRASH_SIGNALS; i++)
    ck_assert_int_eq(sigaction(crash_signals[i], &a, 0), 0);
  sigemptyset(&block);
  sigaddset(&block, SIGBUS);
  ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &block, 0), 0);
  ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, 0, &application_mask), 0);
}

/* Handlers or mask seen other than the application's, by watch(). */
static int foreign;

static void watch(struct fake *f)
{
  struct sigaction a;
  sigset_t mask;
  int i;
  if (f->reads % SELECT_SAMPLES != 0) return; /* each attempt's first */
  pthread_sigmask(SIG_BLOCK, 0, &mask);
  for (i = 0; i < CRASH_SIGNALS; i++) {
    sigaction(crash_signals[i], 0, &a);
    if (a.sa_handler != application_handler) foreign++;
    if (sigismember(&mask, crash_signals[i])
        != sigismember(&application_mask, crash_signals[i]))
      foreign++;
  }
}

static void assert_application_state(void)
{
  struct sigaction a;
  sigset_t mask;
  int i;
  ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, 0, &mask), 0);
  for (i = 0; i < CRASH_SIGNALS; i++) {
    ck_assert_int_eq(sigaction(crash_signals[i], 0, &a), 0);
    ck_assert_msg(a.sa_handler == application_handler,
                  "signal %d: not the application's handler", crash_signals[i]);
    ck_assert_int_eq(sigismember(&mask, crash_signals[i]),
                     sigismember(&application_mask, crash_signals[i]));
  }
}

/* A counter the kernel has answered for runs with no handler installed
 * and no mask changed: setup and every attempt see the application's. */
START_TEST(asked_counters_run_with_nothing_installed)
{
  struct choice c;
  int i;
  application_state();
  for (i = 0; i < 3; i++) {
    fake_counters[i].check = COUNTER_ASKS;
    fakes[i].hook = watch;
  }
  fakes[1].failure = FAKE_SETUP_REFUSES;
  fakes[2].failure = FAKE_DECREASES;   /* several attempts, each watched */
  fakes[2].bad_attempts = 3;
  foreign = 0;
  nreports = 0;
  ck_assert_int_eq(cpucycles_select(table, 3, PERSECOND, 0, keep_report,
                                    &nreports, &c), 0);
  ck_assert_int_gt(fakes[2].setups, 0);
  ck_assert_int_eq(foreign, 0);
  assert_application_state();
}
END_TEST

/* Setup could not ask (info.may_fault): its reads are caught, and a fault
 * drops it as a crash in its reads; the catcher is gone afterwards. */
START_TEST(asked_counter_that_may_fault_is_caught)
{
  struct choice c;
  application_state();
  fake_counters[0].check = COUNTER_ASKS;
  fakes[0].info.may_fault = 1;
  fakes[0].failure = FAKE_READ_SIGILL;
  fake_counters[1].check = COUNTER_ASKS;
  nreports = 0;
  ck_assert_int_eq(cpucycles_select(table, 2, PERSECOND, 0, keep_report,
                                    &nreports, &c), 1);
  ck_assert_int_eq(reports[0].outcome, PROBE_CRASHED);
  ck_assert_int_eq(reports[0].stage, PROBE_IN_READS);
  ck_assert_int_eq(reports[0].signal, SIGILL);
  ck_assert_int_eq(application_handler_ran, 0);
  assert_application_state();
}
END_TEST

/* A crash signal blocked and pending: only the counters that may fault
 * are skipped, each saying why; the best of the others is chosen, and the
 * signal stays pending. */
START_TEST(pending_crash_signal_skips_only_what_may_fault)
{
  struct choice c;
  sigset_t block, pending;
  /* valgrind 3.19 delivers the blocked SIGSEGV that raise() left
   * pending (test-works skips its pending tests there too) */
  if (RUNNING_ON_VALGRIND) return;
  application_state();
  sigemptyset(&block);
  sigaddset(&block, SIGSEGV);
  ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &block, 0), 0);
  ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, 0, &application_mask), 0);
  raise(SIGSEGV); /* blocked: pending */
  /* qemu-user and valgrind do not report it pending: where sigpending()
   * cannot see it, neither can the probe, and there is nothing to test */
  ck_assert_int_eq(sigpending(&pending), 0);
  if (!sigismember(&pending, SIGSEGV)) {
    fprintf(stderr, "sigpending() misses a blocked pending SIGSEGV: skipped\n");
    return;
  }
  fakes[0].steps[0] = 1;                 /* tries: would be the best */
  fake_counters[1].check = COUNTER_ASKS; /* asked: no fault possible */
  fakes[1].steps[0] = 50;
  fake_counters[2].check = COUNTER_ASKS; /* asked, the kernel could not tell */
  fakes[2].info.may_fault = 1;
  nreports = 0;
  ck_assert_int_eq(cpucycles_select(table, 3, PERSECOND, 0, keep_report,
                                    &nreports, &c), 1);
  ck_assert_int_eq(reports[0].outcome, PROBE_NOT_TRIED);
  ck_assert_int_eq(reports[0].catch.problem, CATCH_PENDING);
  ck_assert_int_eq(reports[0].catch.signal, SIGSEGV);
  ck_assert_int_eq(fakes[0].setups, 0);  /* setup not run either */
  ck_assert_int_eq(reports[1].outcome, PROBE_WORKS);
  ck_assert_int_eq(reports[2].outcome, PROBE_NOT_TRIED);
  ck_assert_int_eq(reports[2].stage, PROBE_IN_READS);
  ck_assert_int_eq(fakes[2].releases, 1); /* its setup's resources given back */
  ck_assert_int_eq(sigpending(&pending), 0);
  ck_assert(sigismember(&pending, SIGSEGV));
  assert_application_state();
  /* the same without tracing */
  ck_assert_int_eq(select_among(3, 0, &c), 1);
  ck_assert_str_eq(c.counter->name, "fake-1");
}
END_TEST

/* The application replaces a crash handler while the probe runs: later
 * counters that may fault are not tried (their fault would reach its
 * handler), and its handler stays. */
static void replace_sigill_handler(struct fake *f)
{
  struct sigaction a;
  if (f->reads != 1) return;
  memset(&a, 0, sizeof a);
  a.sa_handler = application_handler;
  sigemptyset(&a.sa_mask);
  sigaction(SIGILL, &a, 0);
}

START_TEST(replaced_handler_skips_later_counters_that_may_fault)
{
  struct choice c;
  application_state();
  fakes[0].hook = replace_sigill_handler;  /* tries, works */
  fakes[1].failure = FAKE_READ_SIGILL;     /* tries: would crash */
  fake_counters[2].check = COUNTER_ASKS;
  nreports = 0;
  ck_assert_int_eq(cpucycles_select(table, 3, PERSECOND, 0, keep_report,
                                    &nreports, &c), 0);
  ck_assert_int_eq(reports[0].outcome, PROBE_WORKS);
  ck_assert_int_eq(reports[1].outcome, PROBE_NOT_TRIED);
  ck_assert_int_eq(reports[1].catch.problem, CATCH_REPLACED);
  ck_assert_int_eq(reports[1].catch.signal, SIGILL);
  ck_assert_int_eq(fakes[1].setups, 0);
  ck_assert_int_eq(reports[2].outcome, PROBE_WORKS);
  ck_assert_int_eq(application_handler_ran, 0);
  assert_application_state();
}
END_TEST
#endif

static Suite *select_suite(void)
{
  Suite *s = suite_create("select");
  TCase *t = tcase_create("probe");
  tcase_add_checked_fixture(t, setup, 0);
  tcase_add_test(t, sigill_counter_is_dropped);
  tcase_add_test(t, setup_crash_is_dropped);
  tcase_add_test(t, setup_refusal_is_dropped);
  tcase_add_test(t, decreasing_counter_retried_ten_times_then_dropped);
  tcase_add_test(t, decreasing_counter_kept_when_a_retry_succeeds);
  tcase_add_test(t, counter_that_never_moves_is_dropped);
  tcase_add_test(t, precision_is_smallest_nonzero_step);
  tcase_add_test(t, penalties_by_kind);
  tcase_add_test(t, oncore_beats_less_noisy_tsc);
  tcase_add_test(t, scaled_counter_must_fit_frequency);
  tcase_add_test(t, exact_frequency_is_scaled_whatever_the_ratio);
  tcase_add_test(t, scaled_counter_that_fits_is_kept);
  tcase_add_test(t, scaling_ratio_rules);
  tcase_add_test(t, multiplier_denominators_end_at_1024);
  tcase_add_test(t, multiplier_fit_is_one_rule);
  tcase_add_test(t, multiplier_gives_up_without_a_clock);
  tcase_add_test(t, multiplier_search_rules);
  tcase_add_test(t, multiplier_measured_against_the_clock);
  tcase_add_test(t, multiplier_measurement_survives_a_descheduled_thread);
  tcase_add_test(t, timer_of_unknown_rate_is_measured);
  tcase_add_test(t, stated_rate_that_agrees_with_the_clock_is_used);
  tcase_add_test(t, stated_rate_that_disagrees_with_the_clock_is_measured);
  tcase_add_test(t, stated_rate_of_a_crawling_timer_is_not_believed);
  tcase_add_test(t, stated_rate_stands_without_a_clock);
  tcase_add_test(t, os_clock_rate_is_not_checked);
  tcase_add_test(t, ties_go_to_the_earlier_counter);
  tcase_add_test(t, ties_within_noise_go_to_the_earlier_counter_every_time);
  tcase_add_test(t, order_bump_counts_working_counters);
  tcase_add_test(t, counter_not_sampled_still_counts_in_the_bump);
  tcase_add_test(t, counter_not_built_is_a_dropped_line_at_its_index);
  tcase_add_test(t, probe_started_again_may_end_with_default_zero);
  tcase_add_test(t, published_trace_power9);
  tcase_add_test(t, published_trace_power7);
  tcase_add_test(t, published_trace_cortex_a7);
  tcase_add_test(t, everything_failing_leaves_default_zero);
  tcase_add_test(t, empty_table_leaves_default_zero);
  tcase_add_test(t, named_counter_is_used_without_probing_others);
  tcase_add_test(t, named_counter_that_fails_falls_back_to_probe);
  tcase_add_test(t, unknown_name_falls_back_to_probe);
  tcase_add_test(t, trace_reports_every_counter);
  tcase_add_test(t, trace_of_a_misfit_scaled_counter);
  tcase_add_test(t, trace_with_a_name_traces_all_and_keeps_the_name);
  tcase_add_test(t, default_zero_by_name);
  tcase_add_test(t, only32_counter_judged_on_low_bits);
  tcase_add_test(t, hopeless_counter_not_sampled_unless_tracing);
  tcase_add_test(t, report_says_why_each_counter_was_dropped);
  tcase_add_test(t, report_of_unsteady_and_working_counters);
#ifndef _WIN32
  tcase_add_test(t, asked_counters_run_with_nothing_installed);
  tcase_add_test(t, asked_counter_that_may_fault_is_caught);
  tcase_add_test(t, pending_crash_signal_skips_only_what_may_fault);
  tcase_add_test(t, replaced_handler_skips_later_counters_that_may_fault);
#endif
  suite_add_tcase(s, t);
  return s;
}

int main(void)
{
  return run_suite(select_suite());
}
