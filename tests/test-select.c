/* The probe as pure logic, fed fake counters (tests/fake-counters.c). */
#include <config.h>
#include <check.h>
#include "check-run.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "fake-counters.h"
#include "select.h"

#define PERSECOND 2400000000LL

static const struct counter *table[FAKE_SLOTS];

static void setup(void)
{
  int i;
  fakes_reset();
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

  /* 25 ns steps of a nanosecond clock at 2.4 GHz: 60 cycles + 200 */
  fakes_reset();
  fakes[0].steps[0] = 25;
  fakes[0].info.kind = COUNTER_OSCLOCK;
  fakes[0].info.frequency = 1000000000LL;
  select_among(1, 0, &c);
  ck_assert_int_eq(c.precision, 260);
  ck_assert(c.scaling > 2.3999 && c.scaling < 2.4001);
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
  ck_assert_int_eq(c.precision, 40);
  ck_assert_int_eq(fakes[0].releases, 1);
  ck_assert_int_eq(fakes[1].releases, 0);
}
END_TEST

START_TEST(scaled_counter_must_fit_frequency)
{
  struct choice c;
  /* 2.4 GHz over 1 GHz is 2.4: no k/2^j (j <= 4) close to it */
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.frequency = 1000000000LL;
  /* the same mismatch is accepted for an OS clock */
  fakes[1].info.kind = COUNTER_OSCLOCK;
  fakes[1].info.frequency = 1000000000LL;
  fakes[1].steps[0] = 1000;
  ck_assert_int_eq(select_among(2, 0, &c), 1);
  ck_assert_int_eq(fakes[0].setups, 1);
  ck_assert_int_eq(fakes[0].reads, 0);
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
  ck_assert_int_eq(c.precision, 20 + 100);  /* 16 ticks x 1.2695, rounded */
  /* the same timer without the flag is a measured multiplier: dropped */
  fakes_reset();
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.frequency = 4096000000LL;
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

START_TEST(scaling_ratio_rules)
{
  struct counter_info i = { .kind = COUNTER_OFFCORE };
  ck_assert(cpucycles_scaling_of(&i, PERSECOND) == 1.0);
  i.frequency = 24000000;
  ck_assert(cpucycles_scaling_of(&i, 2064000000LL) > 85.99);  /* 86 */
  i.frequency = 960000000;
  ck_assert(cpucycles_scaling_of(&i, PERSECOND) > 2.49);      /* 5/2 */
  i.frequency = 1000000000;
  ck_assert(cpucycles_scaling_of(&i, 1001000000LL) > 0);       /* 0.1% off */
  ck_assert(cpucycles_scaling_of(&i, 1010000000LL) < 0);       /* 1% off */
  ck_assert(cpucycles_scaling_of(&i, 100000000LL) < 0);        /* ratio 0.1 */
  /* Large ratios: the timers of arm64 and the like tick at tens of MHz. */
  i.frequency = 24000000;
  ck_assert(cpucycles_scaling_of(&i, 2399987654LL) > 99.99);  /* the default estimate */
  ck_assert(cpucycles_scaling_of(&i, 3204000000LL) > 133.49); /* 267/2 */
  ck_assert(cpucycles_scaling_of(&i, 800000000LL) < 0);       /* 33.33: an idle sample */
  ck_assert(cpucycles_scaling_of(&i, 2000000000LL) < 0);      /* 83.33 */
  i.frequency = 19200000;
  ck_assert(cpucycles_scaling_of(&i, 2399987654LL) > 124.99);
  ck_assert(cpucycles_scaling_of(&i, 1024000000LL) < 0);      /* 53.33 */
  i.frequency = 25000000;
  ck_assert(cpucycles_scaling_of(&i, 2399987654LL) > 95.99);
  ck_assert(cpucycles_scaling_of(&i, 2408250000LL) < 0);      /* 96.33 */
  i.kind = COUNTER_OSCLOCK;
  ck_assert(cpucycles_scaling_of(&i, 1010000000LL) > 1.0);
  i.frequency = -5;
  ck_assert(cpucycles_scaling_of(&i, PERSECOND) < 0);
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
  fakes[1].steps[0] = 3;
  fakes[0].steps[0] = 5;
  ck_assert_int_eq(select_among(3, "fake-2", &c), 1);
  ck_assert_int_eq(fakes[2].releases, 2);
}
END_TEST

START_TEST(unknown_name_falls_back_to_probe)
{
  struct choice c;
  fakes[1].steps[0] = 1;
  fakes[0].steps[0] = 2;
  ck_assert_int_eq(select_among(2, "fake-9", &c), 1);
  ck_assert_int_eq(select_among(2, "", &c), 1);
  ck_assert_int_eq(select_among(2, "fake-1x", &c), 1);
}
END_TEST

static int traced;
static long long traced_precision[FAKE_SLOTS + 1];
static double traced_scaling[FAKE_SLOTS + 1];
static int traced_only32[FAKE_SLOTS + 1];
static const char *traced_name[FAKE_SLOTS + 1];

static void record(const struct probe_report *r, void *arg)
{
  int n = r->index;
  ck_assert_ptr_null(arg);
  ck_assert_int_eq(n, traced);
  ck_assert_int_le(n, FAKE_SLOTS);
  traced_name[n] = r->name;
  traced_precision[n] = r->precision;
  traced_scaling[n] = r->scaling;
  traced_only32[n] = r->info.only32;
  traced++;
}

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
  ck_assert_int_eq(cpucycles_select(table, 4, PERSECOND, 0, record, 0, &c), 2);
  ck_assert_int_eq(traced, 5);
  ck_assert_str_eq(traced_name[0], "fake-0");
  ck_assert_int_eq(traced_precision[0], 0);
  ck_assert_int_eq(traced_precision[1], 7);
  ck_assert(traced_scaling[1] == 1.0);
  ck_assert_int_eq(traced_precision[2], 3);
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
  fakes[0].info.frequency = 1000000000LL;  /* 2.4: no fit */
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
  ck_assert_int_eq(traced_precision[1], 500);
  ck_assert_int_eq(traced_precision[2], 1);
  ck_assert_str_eq(c.counter->name, "fake-1");
  ck_assert_int_eq(c.precision, 500);
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
  ck_assert_int_eq(c.precision, 5);
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
  fakes[1].info.kind = COUNTER_OFFCORE; /* penalty 100 < 150: sampled */
  fakes[1].steps[0] = 60;
  fakes[2].info.kind = COUNTER_OSCLOCK; /* penalty 200 >= 160: skipped */
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

/* The report: why each counter was kept or dropped. */
static struct probe_report reports[FAKE_SLOTS + 1];
static int nreports;

static void keep_report(const struct probe_report *r, void *arg)
{
  ck_assert_ptr_eq(arg, &nreports);
  ck_assert_int_eq(r->index, nreports);
  ck_assert_int_le(nreports, FAKE_SLOTS);
  reports[nreports++] = *r;
}

START_TEST(report_says_why_each_counter_was_dropped)
{
  struct choice c;
  fakes[0].failure = FAKE_SETUP_REFUSES;
  fakes[0].info.refusal = "perf_event_open";
  fakes[0].info.refusal_errno = EACCES;
  fakes[1].failure = FAKE_SETUP_SIGSEGV;
  fakes[2].failure = FAKE_READ_SIGILL;
  fakes[3].info.kind = COUNTER_OFFCORE;
  fakes[3].info.frequency = 1000000000LL;  /* 2.4: no fit */
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
  ck_assert_int_eq(reports[3].info.frequency, 1000000000LL);
  ck_assert_int_eq(reports[3].persecond, PERSECOND);
  ck_assert(reports[3].ratio > 2.3999 && reports[3].ratio < 2.4001);
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
  ck_assert_int_eq(reports[3].precision, 102);  /* 1 tick = 2 cycles + 100 */
  ck_assert(reports[3].scaling == 2.0);
  ck_assert(reports[3].ratio == 2.0);
  ck_assert_int_eq(reports[3].info.kind, COUNTER_OFFCORE);
}
END_TEST

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
  tcase_add_test(t, ties_go_to_the_earlier_counter);
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
  suite_add_tcase(s, t);
  return s;
}

int main(void)
{
  return run_suite(select_suite());
}
