/* The public API on the real machine, through the shared library.  Check
 * runs each test in its own process, so each one makes the first call. */
#include <config.h>
#include <check.h>
#include "check-run.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cpucycles.h"

#ifdef _WIN32
/* mingw-w64 has neither; the library reads the C runtime's environment,
 * which _putenv_s changes. */
static int setenv(const char *name, const char *value, int overwrite)
{
  (void) overwrite;
  return _putenv_s(name, value);
}

static int unsetenv(const char *name)
{
  return _putenv_s(name, "");
}
#endif

/* A release date, YYYYMMDD, as every libcpucycles release has returned:
 * scripts compare it as a number and check for eight digits. */
START_TEST(version_is_the_release_date)
{
  const char *v = cpucycles_version();
  long year, month, day;
  int i;

  ck_assert_str_eq(v, PACKAGE_VERSION);
  ck_assert_uint_eq(strlen(v), 8);
  for (i = 0; i < 8; i++) ck_assert_msg(v[i] >= '0' && v[i] <= '9', "version %s", v);
  year = strtol(v, 0, 10) / 10000;
  month = strtol(v, 0, 10) / 100 % 100;
  day = strtol(v, 0, 10) % 100;
  /* after the original's 20260105, which ours succeeds */
  ck_assert_int_ge(strtol(v, 0, 10), 20260105);
  ck_assert_int_ge(year, 2026);
  ck_assert_int_ge(month, 1);
  ck_assert_int_le(month, 12);
  ck_assert_int_ge(day, 1);
  ck_assert_int_le(day, 31);
}
END_TEST

START_TEST(selected_counter_is_monotonic)
{
  long long prev = cpucycles(), now;
  long increases = 0;
  int i;
  for (i = 0; i < 200000; i++) {
    now = cpucycles();
    ck_assert_int_ge(now, prev);
    increases += now > prev;
    prev = now;
  }
  ck_assert_int_gt(increases, 0);
  ck_assert_str_ne(cpucycles_implementation(), "default-zero");
}
END_TEST

START_TEST(persecond_is_plausible)
{
  long long p = cpucycles_persecond();
  ck_assert_int_ge(p, 1000000LL);
  ck_assert_int_le(p, 100000000000LL);
}
END_TEST

START_TEST(implementation_is_stable)
{
  const char *a = cpucycles_implementation();
  cpucycles();
  ck_assert_str_eq(a, cpucycles_implementation());
}
END_TEST

START_TEST(override_names_the_counter)
{
  setenv("CPUCYCLES_COUNTER", "default-gettimeofday", 1);
  ck_assert_str_eq(cpucycles_implementation(), "default-gettimeofday");
}
END_TEST

START_TEST(override_with_unknown_name_probes)
{
  setenv("CPUCYCLES_COUNTER", "no-such-counter", 1);
  ck_assert_str_ne(cpucycles_implementation(), "no-such-counter");
  ck_assert_str_ne(cpucycles_implementation(), "default-zero");
}
END_TEST

START_TEST(override_with_garbage_probes)
{
  setenv("CPUCYCLES_COUNTER", "default-gettimeofday\n; rm -rf /", 1);
  ck_assert_str_ne(cpucycles_implementation(), "default-gettimeofday");
  ck_assert_str_ne(cpucycles_implementation(), "default-zero");
}
END_TEST

/* CPUCYCLES_COUNTER=default-zero forces default-zero, as documented. */
START_TEST(override_with_default_zero)
{
  setenv("CPUCYCLES_COUNTER", "default-zero", 1);
  ck_assert_int_eq(cpucycles(), 0);
  ck_assert_int_eq(cpucycles(), 0);
  ck_assert_str_eq(cpucycles_implementation(), "default-zero");
  ck_assert_int_gt(cpucycles_persecond(), 0);
}
END_TEST

/* The probe's preference order, lib/counters/order, without comments. */
static int read_order(char names[][64], int max)
{
  const char *dir = getenv("srcdir");
  char path[4096], line[256];
  int n = 0;
  FILE *f;
  snprintf(path, sizeof path, "%s/../lib/counters/order", dir ? dir : "tests");
  f = fopen(path, "r");
  ck_assert_msg(f != 0, "cannot open %s", path);
  while (n < max && fgets(line, sizeof line, f)) {
    char name[64];
    if (line[0] == '#' || sscanf(line, "%63s", name) != 1) continue;
    strcpy(names[n++], name);
  }
  fclose(f);
  return n;
}

/* tracesetup: the first call writes libcpucycles' line for every counter
 * built in, in the preference order of lib/counters/order, numbered from
 * 0, a dropped counter with precision 0, then default-zero last. */
START_TEST(tracesetup_prints_a_line_per_counter)
{
#ifdef _WIN32
  char path[] = "cpucycles-traceXXXXXX"; /* no /tmp: the current directory */
#else
  char path[] = "/tmp/cpucycles-traceXXXXXX";
#endif
  char line[512], order[64][64];
  int fd = mkstemp(path), saved = dup(1), lines = 0, chosen_seen = 0;
  int norder = read_order(order, 64), position = 0, last_was_zero = 0;
  FILE *f;
  ck_assert_int_ge(fd, 0);
  dup2(fd, 1);
  cpucycles_tracesetup();
  cpucycles();
  dup2(saved, 1);
  close(saved);
  close(fd); /* Windows: mkstemp's file cannot be opened again while open */
  f = fopen(path, "r");
  unlink(path);
  ck_assert_ptr_nonnull(f);
  while (fgets(line, sizeof line, f)) {
    int n, only32;
    char name[64];
    long long precision;
    double scaling;
    ck_assert_int_eq(sscanf(line, "cpucycles tracesetup %d %63s precision %lld scaling %lf only32 %d",
                            &n, name, &precision, &scaling, &only32), 5);
    ck_assert_int_eq(n, lines);
    ck_assert(only32 == 0 || only32 == 1);
    ck_assert_int_ge(precision, 0);
    ck_assert(scaling >= 0);
    ck_assert_msg(!last_was_zero, "a line after default-zero: %s", line);
    if (strcmp(name, "default-zero") == 0) {
      last_was_zero = 1;
      ck_assert_int_eq(precision, 0);
    } else {
      /* the next name of the preference order that is built in */
      while (position < norder && strcmp(order[position], name) != 0) position++;
      ck_assert_msg(position < norder, "%s out of lib/counters/order's order", name);
      position++;
    }
    if (strcmp(name, cpucycles_implementation()) == 0) {
      chosen_seen = 1;
      ck_assert_int_gt(precision, 0);
    }
    lines++;
  }
  fclose(f);
  unlink(path); /* again: Windows does not remove a file still open */
  ck_assert_int_ge(lines, 4); /* the default-* clocks and default-zero */
  ck_assert_int_eq(last_was_zero, 1);
  ck_assert_int_eq(chosen_seen, 1);
}
END_TEST

#define THREADS 16
static pthread_barrier_t start_line;

struct racer {
  long long first, last;
  const char *implementation;
  int decreased;
};

static void *race(void *arg)
{
  struct racer *r = arg;
  long long prev;
  int i;
  pthread_barrier_wait(&start_line);
  r->first = prev = cpucycles();
  for (i = 0; i < 10000; i++) {
    long long now = cpucycles();
    if (now < prev) r->decreased = 1;
    prev = now;
  }
  r->last = prev;
  r->implementation = cpucycles_implementation();
  return 0;
}

START_TEST(threads_racing_into_first_call)
{
  pthread_t t[THREADS];
  struct racer r[THREADS];
  int i;
  memset(r, 0, sizeof r);
  pthread_barrier_init(&start_line, 0, THREADS);
  for (i = 0; i < THREADS; i++) ck_assert_int_eq(pthread_create(&t[i], 0, race, &r[i]), 0);
  for (i = 0; i < THREADS; i++) pthread_join(t[i], 0);
  for (i = 0; i < THREADS; i++) {
    ck_assert_int_eq(r[i].decreased, 0);
    ck_assert_int_gt(r[i].last, r[i].first);
    ck_assert_str_eq(r[i].implementation, r[0].implementation);
  }
  ck_assert_str_ne(r[0].implementation, "default-zero");
}
END_TEST

int main(void)
{
  Suite *s = suite_create("api");
  TCase *t = tcase_create("public");
  unsetenv("CPUCYCLES_COUNTER");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, version_is_the_release_date);
  tcase_add_test(t, selected_counter_is_monotonic);
  tcase_add_test(t, persecond_is_plausible);
  tcase_add_test(t, implementation_is_stable);
  tcase_add_test(t, override_names_the_counter);
  tcase_add_test(t, override_with_unknown_name_probes);
  tcase_add_test(t, override_with_garbage_probes);
  tcase_add_test(t, override_with_default_zero);
  tcase_add_test(t, tracesetup_prints_a_line_per_counter);
  tcase_add_test(t, threads_racing_into_first_call);
  suite_add_tcase(s, t);
  return run_suite(s);
}
