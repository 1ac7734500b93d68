/* Tests for the arithmetic of cpucycles-info's measurement lines
 * (src/measure.c), on chosen numbers: no clock, no counter. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <check.h>
#include "check-run.h"
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "measure.h"

/* What measure_print_deviation or measure_print_iqm wrote, as a string. */
static char printed[4096];

static void capture_deviation(long long x, long long base)
{
  FILE *f = tmpfile();
  size_t n;
  ck_assert_ptr_nonnull(f);
  ck_assert_int_gt(measure_print_deviation(f, x, base), 0);
  rewind(f);
  n = fread(printed, 1, sizeof printed - 1, f);
  printed[n] = 0;
  fclose(f);
}

static void capture_iqm(const long long *t)
{
  FILE *f = tmpfile();
  size_t n;
  ck_assert_ptr_nonnull(f);
  ck_assert_int_gt(measure_print_iqm(f, t), 0);
  rewind(f);
  n = fread(printed, 1, sizeof printed - 1, f);
  printed[n] = 0;
  fclose(f);
}

START_TEST(differences_wrap_instead_of_overflowing)
{
  long long t[3] = {LLONG_MAX - 1, LLONG_MIN + 2, 10};
  long long d[2];
  measure_differences(t, 2, d);
  ck_assert_int_eq(d[0], 4); /* once round the 64-bit circle */
  ck_assert_int_eq(d[1], LLONG_MIN + 8); /* 10 - (LLONG_MIN + 2), wrapped */
}
END_TEST

START_TEST(iqm_is_the_mean_of_the_middle_half)
{
  /* sorted: -1000000 1 | 2 3 4 5 | 6 1000000: the middle half's mean is
   * 3.5, rounded up to 4; the outliers do not move it */
  long long d[8] = {1000000, 4, 6, 1, 3, 5, 2, -1000000};
  ck_assert_int_eq(measure_iqm(d, 8), 4);
  {
    long long e[4] = {7, 7, 7, 7};
    ck_assert_int_eq(measure_iqm(e, 4), 7);
  }
  {
    long long e[4] = {0, 10, 11, 100}; /* 10.5 -> 11 */
    ck_assert_int_eq(measure_iqm(e, 4), 11);
  }
  {
    long long e[4] = {0, 10, 12, 100}; /* 11 */
    ck_assert_int_eq(measure_iqm(e, 4), 11);
  }
}
END_TEST

START_TEST(iqm_rounds_to_nearest_below_zero_too)
{
  long long d[4] = {-100, -3, -2, 100};   /* -2.5 -> -2 (halves up) */
  long long e[4] = {-100, -3, -3, 100};   /* -3 */
  long long f[8] = {-9, -9, -1, -1, -1, -2, 9, 9}; /* -5/4 = -1.25 -> -1 */
  long long g[8] = {-9, -9, -2, -2, -1, -2, 9, 9}; /* -7/4 = -1.75 -> -2 */
  ck_assert_int_eq(measure_iqm(d, 4), -2);
  ck_assert_int_eq(measure_iqm(e, 4), -3);
  ck_assert_int_eq(measure_iqm(f, 8), -1);
  ck_assert_int_eq(measure_iqm(g, 8), -2);
}
END_TEST

START_TEST(iqm_of_huge_values_does_not_overflow)
{
  long long d[MEASURE_DIFFERENCES];
  int i;
  for (i = 0; i < MEASURE_DIFFERENCES; i++) d[i] = LLONG_MAX - i % 2;
  /* the middle 32 are 16 of LLONG_MAX - 1 and 16 of LLONG_MAX:
   * mean LLONG_MAX - 0.5, rounded up */
  ck_assert_int_eq(measure_iqm(d, MEASURE_DIFFERENCES), LLONG_MAX);
  for (i = 0; i < MEASURE_DIFFERENCES; i++) d[i] = LLONG_MIN;
  ck_assert_int_eq(measure_iqm(d, MEASURE_DIFFERENCES), LLONG_MIN);
}
END_TEST

START_TEST(iqm_leaves_its_input_alone)
{
  long long d[4] = {4, 3, 2, 1};
  measure_iqm(d, 4);
  ck_assert_int_eq(d[0], 4);
  ck_assert_int_eq(d[3], 1);
}
END_TEST

START_TEST(deviations_are_signed_and_exact)
{
  capture_deviation(5, 5);
  ck_assert_str_eq(printed, "+0");
  capture_deviation(7, 5);
  ck_assert_str_eq(printed, "+2");
  capture_deviation(3, 5);
  ck_assert_str_eq(printed, "-2");
  capture_deviation(LLONG_MAX, LLONG_MIN);
  ck_assert_str_eq(printed, "+18446744073709551615");
  capture_deviation(LLONG_MIN, LLONG_MAX);
  ck_assert_str_eq(printed, "-18446744073709551615");
}
END_TEST

START_TEST(iqm_line_is_the_original_format)
{
  long long t[MEASURE_DIFFERENCES + 1];
  char expected[4096];
  size_t len;
  int i;
  /* differences: 100, then 10 repeated, with a 12 every fourth */
  t[0] = 1000;
  for (i = 0; i < MEASURE_DIFFERENCES; i++)
    t[i + 1] = t[i] + (i == 0 ? 100 : i % 4 == 0 ? 12 : 10);
  capture_iqm(t);
  len = (size_t) snprintf(expected, sizeof expected, "cpucycles iqm 10 ");
  for (i = 0; i < MEASURE_DIFFERENCES; i++)
    len += (size_t) snprintf(expected + len, sizeof expected - len, "%s",
                             i == 0 ? "+90" : i % 4 == 0 ? "+2" : "+0");
  snprintf(expected + len, sizeof expected - len, "\n");
  ck_assert_str_eq(printed, expected);
}
END_TEST

START_TEST(iqm_line_of_a_counter_that_does_not_move)
{
  long long t[MEASURE_DIFFERENCES + 1];
  char expected[4096] = "cpucycles iqm 0 ";
  int i;
  for (i = 0; i <= MEASURE_DIFFERENCES; i++) t[i] = 0;
  capture_iqm(t);
  for (i = 0; i < MEASURE_DIFFERENCES; i++) strcat(expected, "+0");
  strcat(expected, "\n");
  ck_assert_str_eq(printed, expected);
}
END_TEST

START_TEST(observed_bounds_enclose_the_rate)
{
  /* 1000 units per microsecond: 10 us between the clock readings, the
   * counter read 1 us before and after each */
  struct observation o = {0, 2000, 10000, 12000, 1, 11};
  double lo, hi;
  ck_assert_int_eq(measure_observed_bounds(&o, &lo, &hi), 1);
  /* t10 - t01 = 8000 in less than 11 us; t11 - t00 = 12000 in more than 9 */
  ck_assert(lo == 727272727.0); /* floor(8000e6 / 11) */
  ck_assert(hi == 1333333334.0); /* ceil(12000e6 / 9) */
  ck_assert(lo <= 1e9 && 1e9 <= hi);
}
END_TEST

START_TEST(observed_bounds_are_whole_numbers_rounded_outwards)
{
  struct observation o = {0, 0, 10, 10, 0, 3};
  double lo, hi;
  ck_assert_int_eq(measure_observed_bounds(&o, &lo, &hi), 1);
  ck_assert(lo == 2500000.0); /* 10e6 / 4 */
  ck_assert(hi == 5000000.0); /* 10e6 / 2 */
  o.t10 = o.t11 = 7;
  ck_assert_int_eq(measure_observed_bounds(&o, &lo, &hi), 1);
  ck_assert(lo == 1750000.0);
  ck_assert(hi == 3500000.0);
  o.t10 = o.t11 = 1;
  o.m1 = 6; /* 1e6/7 = 142857.14.., 1e6/5 = 200000 */
  ck_assert_int_eq(measure_observed_bounds(&o, &lo, &hi), 1);
  ck_assert(lo == 142857.0);
  ck_assert(hi == 200000.0);
  o.m1 = 9; /* 1e6/10 = 100000, 1e6/8 = 125000 */
  ck_assert_int_eq(measure_observed_bounds(&o, &lo, &hi), 1);
  ck_assert(lo == 100000.0);
  ck_assert(hi == 125000.0);
  o.m1 = 4; /* 1e6/3 = 333333.3.. up to 333334 */
  ck_assert_int_eq(measure_observed_bounds(&o, &lo, &hi), 1);
  ck_assert(hi == 333334.0);
}
END_TEST

START_TEST(observed_says_nothing_when_it_cannot)
{
  double lo = -1, hi = -1;
  struct observation ok = {0, 10, 20, 30, 100, 103};
  struct observation o;
  ck_assert_int_eq(measure_observed_bounds(&ok, &lo, &hi), 1);
  o = ok; o.m1 = 102;                     /* only 2 microseconds */
  ck_assert_int_eq(measure_observed_bounds(&o, &lo, &hi), 0);
  o = ok; o.m1 = 99;                      /* the clock went back */
  ck_assert_int_eq(measure_observed_bounds(&o, &lo, &hi), 0);
  o = ok; o.t01 = -1;                     /* the counter went back */
  ck_assert_int_eq(measure_observed_bounds(&o, &lo, &hi), 0);
  o = ok; o.t10 = 5;
  ck_assert_int_eq(measure_observed_bounds(&o, &lo, &hi), 0);
  o = ok; o.t11 = 19;
  ck_assert_int_eq(measure_observed_bounds(&o, &lo, &hi), 0);
  o = ok; o.m0 = LLONG_MIN; o.m1 = LLONG_MAX; /* no overflow */
  ck_assert_int_eq(measure_observed_bounds(&o, &lo, &hi), 1);
  ck_assert(lo >= 0 && lo <= hi);
}
END_TEST

START_TEST(observed_bounds_of_huge_counts)
{
  struct observation o = {LLONG_MIN, LLONG_MIN, LLONG_MAX, LLONG_MAX, 0, 1000000};
  double lo, hi;
  ck_assert_int_eq(measure_observed_bounds(&o, &lo, &hi), 1);
  ck_assert(lo > 1.8e19 && lo <= hi);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("cpucycles-info arithmetic");
  TCase *c = tcase_create("measure");
  tcase_add_test(c, differences_wrap_instead_of_overflowing);
  tcase_add_test(c, iqm_is_the_mean_of_the_middle_half);
  tcase_add_test(c, iqm_rounds_to_nearest_below_zero_too);
  tcase_add_test(c, iqm_of_huge_values_does_not_overflow);
  tcase_add_test(c, iqm_leaves_its_input_alone);
  tcase_add_test(c, deviations_are_signed_and_exact);
  tcase_add_test(c, iqm_line_is_the_original_format);
  tcase_add_test(c, iqm_line_of_a_counter_that_does_not_move);
  tcase_add_test(c, observed_bounds_enclose_the_rate);
  tcase_add_test(c, observed_bounds_are_whole_numbers_rounded_outwards);
  tcase_add_test(c, observed_says_nothing_when_it_cannot);
  tcase_add_test(c, observed_bounds_of_huge_counts);
  suite_add_tcase(s, c);
  return run_suite(s);
}
