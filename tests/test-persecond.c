/* Tests for the CPU frequency estimate (lib/persecond.c).
 *
 * The estimate is driven through its root-directory seam: each case is a
 * small tree under $srcdir/fixtures/persecond/<case>/ holding etc/, proc/
 * and sys/ files.  A few cases that would need large or special files (a
 * 64 KiB cpuinfo, a FIFO) are built in a temporary directory instead. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

/* mkdtemp and mkfifo are POSIX.1-2008, hidden by -std=c11 alone. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <check.h>
#include "check-run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "persecond.h"

/* Every fixture that exercises one source puts this value, or the same
 * frequency in its own unit, into the next source: seeing it proves the
 * bad value fell through rather than being believed. */
#define NEXT 1234567000LL
#define NEXT_ENV "1234567000"

static const char *srcdir(void)
{
  const char *dir = getenv("srcdir");
  return dir && *dir ? dir : ".";
}

static long long estimate_case(const char *name, const char *env)
{
  char root[4096];
  int n = snprintf(root, sizeof root, "%s/fixtures/persecond/%s", srcdir(),
                   name);
  ck_assert_int_lt(n, (int)sizeof root);
  return cpucycles_persecond_estimate(root, env);
}

/* ---------------------------------------------------------------- parse */

#define INT PERSECOND_INTEGER
#define DEC PERSECOND_DECIMAL
#define SET PERSECOND_SETTING

struct parse_case {
  const char *text;
  int len;          /* -1: strlen(text) */
  int form;
  int unit;         /* power of ten: 0 Hz, 3 kHz, 6 MHz */
  int ok;
  long long value;
};

static const struct parse_case parse_cases[] = {
  /* the kernel's decimal form (/proc/cpuinfo) */
  { "2400000000", -1, DEC, 0, 1, 2400000000LL },
  { "2400000000\n", -1, DEC, 0, 1, 2400000000LL },
  { "2400000000 \t\r\n", -1, DEC, 0, 1, 2400000000LL },
  { "2400000", -1, DEC, 3, 1, 2400000000LL },
  { "2400.000", -1, DEC, 6, 1, 2400000000LL },
  { "2399.987654", -1, DEC, 6, 1, CPUCYCLES_PERSECOND_DEFAULT },
  { "2445.434", -1, DEC, 6, 1, 2445434000LL },
  { "2000.000000", -1, DEC, 6, 1, 2000000000LL },
  { "0.5", -1, DEC, 9, 1, 500000000LL },
  { "2400.0000000000000000000000001", -1, DEC, 6, 1, 2400000000LL },
  { "0002400", -1, DEC, 6, 1, 2400000000LL },
  { "1000000", -1, DEC, 0, 1, 1000000LL },            /* lower bound, inclusive */
  { "100000000000", -1, DEC, 0, 1, 100000000000LL },  /* upper bound, inclusive */
  { "1000.0004", -1, DEC, 3, 1, 1000000LL },           /* rounds to nearest */
  { "1000.0005", -1, DEC, 3, 1, 1000001LL },           /* halves round up */
  { "99999999999.5", -1, DEC, 0, 1, 100000000000LL },
  { "999999", -1, DEC, 0, 0, 0 },
  { "999999.9", -1, DEC, 0, 0, 0 },                    /* bound is on the exact value */
  { "999999.9999999999999999999999", -1, DEC, 0, 0, 0 },
  { "100000000000.1", -1, DEC, 0, 0, 0 },
  { "100000000000.0000000000000000001", -1, DEC, 0, 0, 0 },
  { "100000000001", -1, DEC, 0, 0, 0 },
  { "", -1, DEC, 0, 0, 0 },
  { " ", -1, DEC, 0, 0, 0 },
  { "\n", -1, DEC, 0, 0, 0 },
  { "abc", -1, DEC, 0, 0, 0 },
  { "-2400000000", -1, DEC, 0, 0, 0 },
  { "+2400000000", -1, DEC, 0, 0, 0 },
  { "0", -1, DEC, 0, 0, 0 },
  { "0.0", -1, DEC, 6, 0, 0 },
  { "nan", -1, DEC, 0, 0, 0 },
  { "NaN", -1, DEC, 0, 0, 0 },
  { "inf", -1, DEC, 0, 0, 0 },
  { "infinity", -1, DEC, 0, 0, 0 },
  { "99999999999999999999999", -1, DEC, 0, 0, 0 },
  { "184467440737095516170000000", -1, DEC, 0, 0, 0 },
  { "2400x", -1, DEC, 6, 0, 0 },
  { "2400000000x", -1, DEC, 0, 0, 0 },
  { "x2400000000", -1, DEC, 0, 0, 0 },
  { " 2400000000", -1, DEC, 0, 0, 0 },
  { "2400000000 1", -1, DEC, 0, 0, 0 },
  { "0x8f0d1800", -1, DEC, 0, 0, 0 },
  { "2.4e9", -1, DEC, 0, 0, 0 },
  { "2.4E9", -1, DEC, 0, 0, 0 },
  { "24e8", -1, DEC, 0, 0, 0 },
  { "2400.", -1, DEC, 6, 0, 0 },
  { ".5", -1, DEC, 9, 0, 0 },
  { "2400,000", -1, DEC, 6, 0, 0 },
  { "2400..0", -1, DEC, 6, 0, 0 },
  { "2400.0.0", -1, DEC, 6, 0, 0 },
  { "2400.000MHz", -1, DEC, 6, 0, 0 },
  { "2400000000\v", -1, DEC, 0, 0, 0 },
  { "2400000000\0", 11, DEC, 0, 0, 0 },                /* NUL is junk */
  { "24000000009", 10, DEC, 0, 1, 2400000000LL },     /* len is honoured */
  { "2400000000", 3, DEC, 0, 0, 0 },
  { "2400000000", -1, DEC, -1, 0, 0 },                 /* bad units */
  { "2400000000", -1, DEC, 10, 0, 0 },
  { "2", -1, DEC, 10, 0, 0 },
  /* the kernel's integer form (sysfs) */
  { "3000000\n", -1, INT, 3, 1, 3000000000LL },
  { "1165000000\n", -1, INT, 0, 1, 1165000000LL },
  { "3000000.0\n", -1, INT, 3, 0, 0 },
  { "3e6\n", -1, INT, 3, 0, 0 },
  { " 3000000\n", -1, INT, 3, 0, 0 },
  { "3000000 kHz\n", -1, INT, 3, 0, 0 },
  { "<unsupported>\n", -1, INT, 3, 0, 0 },
  /* what a person writes (/etc/cpucyclespersecond, the variable) */
  { "3000000000", -1, SET, 0, 1, 3000000000LL },
  { "3000000000\n", -1, SET, 0, 1, 3000000000LL },
  { " \t3000000000 \t\r\n", -1, SET, 0, 1, 3000000000LL },
  { "\n\n3000000000\n", -1, SET, 0, 1, 3000000000LL },
  { "3000000000.0", -1, SET, 0, 1, 3000000000LL },
  { "3000000000.5", -1, SET, 0, 1, 3000000001LL },
  { "2.5e9", -1, SET, 0, 1, 2500000000LL },
  { "2.5E9", -1, SET, 0, 1, 2500000000LL },
  { "2.5e+09", -1, SET, 0, 1, 2500000000LL },
  { "25000000000e-1", -1, SET, 0, 1, 2500000000LL },
  { "3e9", -1, SET, 0, 1, 3000000000LL },
  { "0.000000000003e21", -1, SET, 0, 1, 3000000000LL },
  { "1e6", -1, SET, 0, 1, 1000000LL },
  { "1e11", -1, SET, 0, 1, 100000000000LL },
  { "2.4e3", -1, SET, 6, 1, 2400000000LL },          /* the unit applies */
  { "3000000000 # set by ops", -1, SET, 0, 1, 3000000000LL },
  { "3000000000 Hz\n", -1, SET, 0, 1, 3000000000LL },
  { "3000000000\t3100000000", -1, SET, 0, 1, 3000000000LL },
  { "3000000000\n# set by ops\n", -1, SET, 0, 1, 3000000000LL },
  { "3000000000 \0junk", 16, SET, 0, 1, 3000000000LL },  /* after a blank: anything */
  { "3000000000abc", -1, SET, 0, 0, 0 },             /* glued junk */
  { "3000000000#ops", -1, SET, 0, 0, 0 },
  { "3000000000\0", 11, SET, 0, 0, 0 },
  { "3e9x", -1, SET, 0, 0, 0 },
  { "3e", -1, SET, 0, 0, 0 },
  { "3e+", -1, SET, 0, 0, 0 },
  { "3e 9", -1, SET, 0, 0, 0 },
  { "3ee9", -1, SET, 0, 0, 0 },
  { "3.e9", -1, SET, 0, 0, 0 },
  { ".3e10", -1, SET, 0, 0, 0 },
  { "3000000000.", -1, SET, 0, 0, 0 },
  { "-3000000000", -1, SET, 0, 0, 0 },
  { "+3000000000", -1, SET, 0, 0, 0 },
  { "-3e9", -1, SET, 0, 0, 0 },
  { "0", -1, SET, 0, 0, 0 },
  { "0e9", -1, SET, 0, 0, 0 },
  { "0x1p31", -1, SET, 0, 0, 0 },
  { "0xb2d05e00", -1, SET, 0, 0, 0 },
  { "nan", -1, SET, 0, 0, 0 },
  { "inf", -1, SET, 0, 0, 0 },
  { "infinity", -1, SET, 0, 0, 0 },
  { "1e999", -1, SET, 0, 0, 0 },
  { "1e-999", -1, SET, 0, 0, 0 },
  { "1e99999999999999999999", -1, SET, 0, 0, 0 },
  { "3e12", -1, SET, 0, 0, 0 },
  { "1e5", -1, SET, 0, 0, 0 },
  { "9.99999e5", -1, SET, 0, 0, 0 },
  { "1.00000000000000000001e11", -1, SET, 0, 0, 0 },
  { "3,0e9", -1, SET, 0, 0, 0 },
  { "", -1, SET, 0, 0, 0 },
  { " \n", -1, SET, 0, 0, 0 },
  { "# 3000000000", -1, SET, 0, 0, 0 },
  { "3000000000\v", -1, SET, 0, 0, 0 },
  { "3000000000", -1, 3, 0, 0, 0 },                  /* bad form */
  { "3000000000", -1, -1, 0, 0, 0 },
};

START_TEST(test_parse_table)
{
  const struct parse_case *c = &parse_cases[_i];
  size_t len = c->len < 0 ? strlen(c->text) : (size_t)c->len;
  long long out = -42;
  int r = cpucycles_persecond_parse(c->text, len, c->form, c->unit, &out);

  if (c->ok) {
    ck_assert_msg(r == 0, "parse(\"%s\", form %d, unit %d) rejected", c->text,
                  c->form, c->unit);
    ck_assert_int_eq(out, c->value);
  } else {
    ck_assert_msg(r == -1, "parse(\"%s\", form %d, unit %d) accepted: %lld",
                  c->text, c->form, c->unit, out);
    ck_assert_int_eq(out, -42);   /* *out untouched on failure */
  }
}
END_TEST

START_TEST(test_parse_bad_arguments)
{
  long long out = -42;

  ck_assert_int_eq(cpucycles_persecond_parse(NULL, 3, DEC, 0, &out), -1);
  ck_assert_int_eq(cpucycles_persecond_parse("2400000000", 10, DEC, 0, NULL),
                   -1);
  ck_assert_int_eq(out, -42);
}
END_TEST

START_TEST(test_parse_long_input)
{
  /* thousands of digits: no overflow, no wraparound, in every form */
  static char digits[5000];
  static const int forms[] = { INT, DEC, SET };
  long long out = -42;
  size_t i;

  for (i = 0; i < sizeof forms / sizeof forms[0]; ++i) {
    memset(digits, '9', sizeof digits);
    ck_assert_int_eq(cpucycles_persecond_parse(digits, sizeof digits,
                                               forms[i], 0, &out), -1);
    memset(digits, '0', sizeof digits);
    memcpy(digits + sizeof digits - 10, "2400000000", 10);
    ck_assert_int_eq(cpucycles_persecond_parse(digits, sizeof digits,
                                               forms[i], 0, &out), 0);
    ck_assert_int_eq(out, 2400000000LL);
  }
  /* 0.000...0003e<big>: the exponent and the fraction's zeros cancel */
  memset(digits, '0', sizeof digits);
  digits[1] = '.';
  memcpy(digits + 4980, "3e4988", 6);
  ck_assert_int_eq(cpucycles_persecond_parse(digits, 4986, SET, 0, &out), 0);
  ck_assert_int_eq(out, 3000000000LL);
}
END_TEST

/* ------------------------------------------------------ fixture cases */

struct fixture_case {
  const char *name;
  const char *env;
  long long expected;
};

static const struct fixture_case fixture_cases[] = {
  /* precedence, the original's order: etc > scaling_setspeed >
   * scaling_max_freq > clock_tick > /proc/cpuinfo > environment; then
   * our own default; cpuinfo_max_freq and tsc_freq_khz, present in every
   * prec- tree, are never read */
  { "prec-etc", "3100000000", 3000000000LL },
  { "prec-setspeed", "3100000000", 3600000000LL },
  { "prec-scaling", "3100000000", 3400000000LL },
  { "prec-clocktick", "3100000000", 3300000000LL },
  { "prec-cpuinfo", "3100000000", 3200000000LL },
  { "prec-extras", "3100000000", 3100000000LL },
  { "prec-extras", NULL, CPUCYCLES_PERSECOND_DEFAULT },
  { "does-not-exist", "3100000000", 3100000000LL },
  { "does-not-exist", NULL, CPUCYCLES_PERSECOND_DEFAULT },
  /* the userspace governor's pinned frequency, else the policy limit */
  { "setspeed-pinned", NULL, 1800000000LL },
  { "setspeed-unsupported", NULL, 3000000000LL },
  { "setspeed-empty", NULL, NEXT },
  { "setspeed-trailing-junk", NULL, NEXT },
  { "setspeed-too-small", NULL, NEXT },
  /* SPARC's clock_tick, in Hz */
  { "clocktick-sparc", NEXT_ENV, 1165000000LL },
  { "clocktick-trailing-junk", NULL, NEXT },
  { "clocktick-hex", NULL, NEXT },
  { "clocktick-fraction", NULL, NEXT },
  { "clocktick-zero", NULL, NEXT },
  /* accepted file forms */
  { "etc-no-newline", NULL, 3000000000LL },
  { "etc-crlf", NULL, 3000000000LL },
  { "etc-trailing-blanks", NULL, 3000000000LL },
  { "etc-leading-zeros", NULL, 3000000000LL },
  { "etc-min", NULL, 1000000LL },
  { "etc-max", NULL, 100000000000LL },
  { "maxfreq-realistic", NULL, 3700000000LL },
  { "maxfreq-min", NULL, 1000000LL },
  { "maxfreq-max", NULL, 100000000000LL },
  /* what a person writes into /etc/cpucyclespersecond */
  { "etc-comment", NULL, 3000000000LL },
  { "etc-comment-line", NULL, 3000000000LL },
  { "etc-long-comment", NULL, 3000000000LL },
  { "etc-unit-word", NULL, 3000000000LL },
  { "etc-surrounding", NULL, 3000000000LL },
  { "etc-fraction-zero", NULL, 3000000000LL },
  { "etc-exponent-sign", NULL, 2500000000LL },
  { "etc-leading-space", NULL, 2400000000LL },
  { "etc-fraction", NULL, 2400000001LL },       /* 2400000000.5, rounded */
  { "etc-exponent", NULL, 2400000000LL },
  { "etc-two-numbers", NULL, 2400000000LL },    /* the second is a comment */
  { "etc-too-long", NULL, 2400000000LL },       /* trailing blanks */
  /* ... and what is still refused there */
  { "etc-glued-comment", NEXT_ENV, NEXT },
  { "etc-exponent-junk", NEXT_ENV, NEXT },
  { "etc-exponent-overflow", NEXT_ENV, NEXT },
  { "etc-exponent-empty", NEXT_ENV, NEXT },
  { "etc-exponent-hex", NEXT_ENV, NEXT },
  /* /proc/cpuinfo samples */
  { "cpuinfo-x86", NEXT_ENV, 2999998000LL },
  { "cpuinfo-x86-vm", NEXT_ENV, 2445434000LL },
  { "cpuinfo-ppc64le", NEXT_ENV, 2200000000LL },
  { "cpuinfo-s390x", NEXT_ENV, 5200000000LL },   /* static, not dynamic */
  { "cpuinfo-nospace", NEXT_ENV, 2400000000LL },
  { "cpuinfo-no-newline", NEXT_ENV, 2400000000LL },
  { "cpuinfo-crlf", NEXT_ENV, 2400000000LL },
  { "cpuinfo-bad-line-skipped", NEXT_ENV, 2000000000LL },
  /* key priority, as the original's: "cpu MHz", then "clock", then
   * "cpu MHz static", whatever their order in the block */
  { "cpuinfo-clock-then-mhz", NEXT_ENV, 2400000000LL },
  { "cpuinfo-static-then-clock", NEXT_ENV, 2000000000LL },
  { "cpuinfo-mhz-zero-then-clock", NEXT_ENV, 2000000000LL },
  /* ... and samples without a usable frequency in the first block */
  { "cpuinfo-arm64", NEXT_ENV, NEXT },
  { "cpuinfo-arm64", NULL, CPUCYCLES_PERSECOND_DEFAULT },
  { "cpuinfo-second-block", NEXT_ENV, NEXT },
  { "cpuinfo-s390x-dynamic-only", NEXT_ENV, NEXT },
  { "cpuinfo-s390x-old", NEXT_ENV, NEXT },
  { "cpuinfo-ppc-no-suffix", NEXT_ENV, NEXT },
  { "cpuinfo-ppc-bad-suffix", NEXT_ENV, NEXT },
  { "cpuinfo-key-exact", NEXT_ENV, NEXT },
  { "cpuinfo-emptyfile", NEXT_ENV, NEXT },
};

START_TEST(test_fixture_table)
{
  const struct fixture_case *c = &fixture_cases[_i];
  long long got = estimate_case(c->name, c->env);

  ck_assert_msg(got == c->expected, "%s (env %s): got %lld, expected %lld",
                c->name, c->env ? c->env : "unset", got, c->expected);
}
END_TEST

/* The malformed-value matrix: for each form, fixtures etc-FORM (bad etc
 * file, scaling_max_freq holds NEXT), maxfreq-FORM (bad scaling_max_freq,
 * clock_tick holds NEXT) and cpuinfo-FORM (bad "cpu MHz" in the first
 * block, a good one in the second block, NEXT in the environment), each
 * where the form is malformed for that source. */
struct malformed_form {
  const char *name;
  int in_etc;
  int in_cpuinfo;
};

static const struct malformed_form malformed_forms[] = {
  { "empty", 1, 1 },         { "text", 1, 1 },          { "negative", 1, 1 },
  { "plus", 1, 1 },          { "zero", 1, 1 },          { "nan", 1, 1 },
  { "inf", 1, 1 },           { "overflow", 1, 1 },      { "trailing-junk", 1, 1 },
  { "leading-junk", 1, 1 },  { "whitespace-only", 1, 1 }, { "too-small", 1, 1 },
  { "too-large", 1, 1 },     { "hex", 1, 1 },           { "trailing-dot", 1, 1 },
  { "leading-dot", 1, 1 },   { "comma", 1, 1 },         { "nul", 1, 1 },
  /* valid in /etc, malformed in a kernel-written file */
  { "exponent", 0, 1 },      { "two-numbers", 0, 1 },
  /* valid in /etc and in a cpuinfo line, malformed in sysfs */
  { "leading-space", 0, 0 }, { "fraction", 0, 0 },      { "too-long", 0, 0 },
};

#define FORMS (int)(sizeof malformed_forms / sizeof malformed_forms[0])

START_TEST(test_malformed_matrix)
{
  static const char *const kinds[] = { "etc", "maxfreq", "cpuinfo" };
  const struct malformed_form *form = &malformed_forms[_i % FORMS];
  const char *kind = kinds[_i / FORMS];
  char name[256];
  long long got;

  if (strcmp(kind, "etc") == 0 && !form->in_etc) return;
  if (strcmp(kind, "cpuinfo") == 0 && !form->in_cpuinfo) return;
  snprintf(name, sizeof name, "%s-%s", kind, form->name);
  got = estimate_case(name, NEXT_ENV);
  ck_assert_msg(got == NEXT, "%s: got %lld, expected %lld", name, got, NEXT);
}
END_TEST

/* -------------------------------------------------------- environment */

START_TEST(test_env_values)
{
  static const struct { const char *env; long long expected; } cases[] = {
    { NULL, CPUCYCLES_PERSECOND_DEFAULT },
    { "3100000000", 3100000000LL },
    { "3100000000\n", 3100000000LL },
    /* what a person writes, as in /etc/cpucyclespersecond */
    { " 3100000000", 3100000000LL },
    { "\t3100000000 \t", 3100000000LL },
    { "3100000000.0", 3100000000LL },
    { "3100000000.5", 3100000001LL },
    { "3.1e9", 3100000000LL },
    { "3.1E+09", 3100000000LL },
    { "3100000000 # set by ops", 3100000000LL },
    { "3100000000 Hz", 3100000000LL },
    /* refused */
    { "", CPUCYCLES_PERSECOND_DEFAULT },
    { "garbage", CPUCYCLES_PERSECOND_DEFAULT },
    { "fast", CPUCYCLES_PERSECOND_DEFAULT },
    { "-3100000000", CPUCYCLES_PERSECOND_DEFAULT },
    { "+3100000000", CPUCYCLES_PERSECOND_DEFAULT },
    { "0", CPUCYCLES_PERSECOND_DEFAULT },
    { "nan", CPUCYCLES_PERSECOND_DEFAULT },
    { "inf", CPUCYCLES_PERSECOND_DEFAULT },
    { "99999999999999999999999", CPUCYCLES_PERSECOND_DEFAULT },
    { "1e999", CPUCYCLES_PERSECOND_DEFAULT },
    { "3100000000x", CPUCYCLES_PERSECOND_DEFAULT },
    { "3.1e9x", CPUCYCLES_PERSECOND_DEFAULT },
    { "3100000000#ops", CPUCYCLES_PERSECOND_DEFAULT },
    { "x3100000000", CPUCYCLES_PERSECOND_DEFAULT },
    { " ", CPUCYCLES_PERSECOND_DEFAULT },
    { "999999", CPUCYCLES_PERSECOND_DEFAULT },
    { "100000000001", CPUCYCLES_PERSECOND_DEFAULT },
    { "0xb8c63f00", CPUCYCLES_PERSECOND_DEFAULT },
    { "3100", CPUCYCLES_PERSECOND_DEFAULT },   /* not MHz: Hz, implausible */
  };
  size_t i;

  for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    long long got = estimate_case("does-not-exist", cases[i].env);
    ck_assert_msg(got == cases[i].expected, "env \"%s\": got %lld",
                  cases[i].env ? cases[i].env : "(unset)", got);
  }
}
END_TEST

/* ------------------------------------------- trees built at test time */

/* With POSIX calls (mkdtemp, mkfifo); not in the Windows run. */
#ifndef _WIN32

static char tmproot[64];

static void tmp_setup(void)
{
  strcpy(tmproot, "/tmp/test-persecond-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmproot));
}

static void tmp_teardown(void)
{
  static const char *const leaves[] = {
    "/proc/cpuinfo", "/proc", "/etc/cpucyclespersecond", "/etc",
  };
  char path[128];
  size_t i;

  for (i = 0; i < sizeof leaves / sizeof leaves[0]; ++i) {
    snprintf(path, sizeof path, "%s%s", tmproot, leaves[i]);
    if (remove(path) < 0 && errno != ENOENT) perror(path);
  }
  rmdir(tmproot);
}

static FILE *tmp_create(const char *dir, const char *file)
{
  char path[128];
  FILE *f;

  snprintf(path, sizeof path, "%s%s", tmproot, dir);
  mkdir(path, 0700);
  snprintf(path, sizeof path, "%s%s%s", tmproot, dir, file);
  f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  return f;
}

/* A line longer than the reader's 4 KiB window, before the frequency, is
 * skipped whole: its tail past the first 4096 bytes looks like a frequency
 * line and must not be read as one. */
START_TEST(test_cpuinfo_long_line)
{
  FILE *f = tmp_create("/proc", "/cpuinfo");
  int i;

  fputs("processor\t: 0\nflags\t\t:", f);
  for (i = 8; i < 4096; ++i) fputc('x', f);
  fputs("cpu MHz\t\t: 1000.000\n", f);
  fputs("cpu MHz\t\t: 2400.000\n\n", f);
  fclose(f);
  ck_assert_int_eq(cpucycles_persecond_estimate(tmproot, NULL), 2400000000LL);
}
END_TEST

/* Short lines with a frequency at 60 KiB: read; past 64 KiB: not read. */
static long long cpuinfo_with_frequency_after(long bytes)
{
  FILE *f = tmp_create("/proc", "/cpuinfo");
  long n;

  for (n = 0; n < bytes; n += 16) fputs("padding  : 0123\n", f);
  fputs("cpu MHz\t\t: 2400.000\n", f);
  fclose(f);
  return cpucycles_persecond_estimate(tmproot, NULL);
}

START_TEST(test_cpuinfo_within_limit)
{
  ck_assert_int_eq(cpuinfo_with_frequency_after(60 * 1024), 2400000000LL);
}
END_TEST

START_TEST(test_cpuinfo_beyond_limit)
{
  ck_assert_int_eq(cpuinfo_with_frequency_after(64 * 1024),
                   CPUCYCLES_PERSECOND_DEFAULT);
}
END_TEST

/* A line cut by the 64 KiB bound must not yield its first digits. */
START_TEST(test_cpuinfo_cut_at_limit)
{
  FILE *f = tmp_create("/proc", "/cpuinfo");
  long n;

  /* 4095 * 16 + 4 + 12 = 65536: the bound falls right after "24", and
   * 24 MHz would be plausible. */
  for (n = 0; n < 4095; ++n) fputs("padding  : 0123\n", f);
  fputs("x:1\n", f);
  fputs("cpu MHz : 24", f);
  fputs("00.000\n", f);
  fclose(f);
  ck_assert_int_eq(cpucycles_persecond_estimate(tmproot, NULL),
                   CPUCYCLES_PERSECOND_DEFAULT);
}
END_TEST

/* /etc/cpucyclespersecond longer than what is read of it (256 bytes): a
 * number cut by that bound is refused, not read as its first digits.
 * Here 246 blanks, then 1e13 (implausible), whose first ten digits, 1e9,
 * would be plausible. */
START_TEST(test_etc_number_cut_at_limit)
{
  FILE *f = tmp_create("/etc", "/cpucyclespersecond");
  int i;

  for (i = 0; i < 246; ++i) fputc(' ', f);
  fputs("10000000000000 # Hz\n", f);
  fclose(f);
  ck_assert_int_eq(cpucycles_persecond_estimate(tmproot, "3100000000"),
                   3100000000LL);
}
END_TEST

/* ... while a number within the bound is read, whatever follows. */
START_TEST(test_etc_number_before_limit)
{
  FILE *f = tmp_create("/etc", "/cpucyclespersecond");
  int i;

  for (i = 0; i < 240; ++i) fputc(' ', f);
  fputs("3000000000 # a comment running past the 256 bytes read\n", f);
  fclose(f);
  ck_assert_int_eq(cpucycles_persecond_estimate(tmproot, "3100000000"),
                   3000000000LL);
}
END_TEST

/* A FIFO where a file is expected must not block the estimate. */
START_TEST(test_etc_fifo)
{
  char path[128];

  snprintf(path, sizeof path, "%s/etc", tmproot);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  snprintf(path, sizeof path, "%s/etc/cpucyclespersecond", tmproot);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  ck_assert_int_eq(cpucycles_persecond_estimate(tmproot, "3100000000"),
                   3100000000LL);
}
END_TEST

/* A directory where a file is expected: read() fails, fall through. */
START_TEST(test_etc_directory)
{
  char path[128];

  snprintf(path, sizeof path, "%s/etc", tmproot);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  snprintf(path, sizeof path, "%s/etc/cpucyclespersecond", tmproot);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  ck_assert_int_eq(cpucycles_persecond_estimate(tmproot, "3100000000"),
                   3100000000LL);
}
END_TEST

#endif

/* ---------------------------------------------------- the real system */

START_TEST(test_real_system)
{
  long long hz = cpucycles_persecond_estimate("", NULL);
  ck_assert_int_ge(hz, 1000000LL);
  ck_assert_int_le(hz, 100000000000LL);
  /* NULL means the real system too; "cpu MHz" may move between reads on
   * a machine without cpufreq, so only the range is checked. */
  hz = cpucycles_persecond_estimate(NULL, NULL);
  ck_assert_int_ge(hz, 1000000LL);
  ck_assert_int_le(hz, 100000000000LL);
}
END_TEST

START_TEST(test_root_too_long)
{
  static char root[8192];

  memset(root, 'a', sizeof root - 1);
  ck_assert_int_eq(cpucycles_persecond_estimate(root, "3100000000"),
                   3100000000LL);
}
END_TEST

#ifndef _WIN32 /* the reports' tests use the generated trees above */

/* ------------------------------------------------------------- reported */

/* What cpucycles_persecond_estimate_reported tells its report. */
#define MAX_REPORTED 12
static struct reported {
  char source[64];
  enum persecond_verdict verdict;
  char text[80];    /* NUL-terminated copy; "(null)" when no text */
  char unit[8];
  int error;
  long long value;
} reported[MAX_REPORTED];
static int nreported;

static void record_source(const struct persecond_source *s, void *arg)
{
  struct reported *r;

  ck_assert_ptr_eq(arg, &nreported);
  ck_assert_int_lt(nreported, MAX_REPORTED);
  r = &reported[nreported++];
  snprintf(r->source, sizeof r->source, "%s", s->source);
  r->verdict = s->verdict;
  if (s->text)
    snprintf(r->text, sizeof r->text, "%.*s",
             (int)(s->len < sizeof r->text ? s->len : sizeof r->text - 1), s->text);
  else
    strcpy(r->text, "(null)");
  snprintf(r->unit, sizeof r->unit, "%s", s->unit ? s->unit : "-");
  r->error = s->error;
  r->value = s->value;
}

static long long estimate_reported(const char *env)
{
  long long plain = cpucycles_persecond_estimate(tmproot, env);
  long long hz;

  nreported = 0;
  hz = cpucycles_persecond_estimate_reported(tmproot, env, record_source,
                                             &nreported);
  ck_assert_int_eq(hz, plain);
  return hz;
}

#define CPU0_FREQ "/sys/devices/system/cpu/cpu0/cpufreq"

/* Every source tried, in order, with the text judged and why it was
 * refused, up to the one that answered. */
START_TEST(test_reported_sources)
{
  FILE *f = tmp_create("/etc", "/cpucyclespersecond");
  fputs("2400 MHz\n", f);
  fclose(f);
  f = tmp_create("/proc", "/cpuinfo");
  fputs("processor\t: 0\ncpu MHz\t\t: 2400,000\n\n", f);
  fclose(f);

  ck_assert_int_eq(estimate_reported("3100000000"), 3100000000LL);
  ck_assert_int_eq(nreported, 6);
  ck_assert_str_eq(reported[0].source, "/etc/cpucyclespersecond");
  /* 2400 Hz and a comment: the file is in Hz */
  ck_assert_int_eq(reported[0].verdict, PERSECOND_IMPLAUSIBLE);
  ck_assert_str_eq(reported[0].text, "2400 MHz\n");
  ck_assert_str_eq(reported[0].unit, "Hz");
  ck_assert_str_eq(reported[1].source, CPU0_FREQ "/scaling_setspeed");
  ck_assert_int_eq(reported[1].verdict, PERSECOND_ABSENT);
  ck_assert_str_eq(reported[1].text, "(null)");
  ck_assert_str_eq(reported[2].source, CPU0_FREQ "/scaling_max_freq");
  ck_assert_int_eq(reported[2].verdict, PERSECOND_ABSENT);
  ck_assert_str_eq(reported[3].source, "/sys/devices/system/cpu/cpu0/clock_tick");
  ck_assert_int_eq(reported[3].verdict, PERSECOND_ABSENT);
  ck_assert_str_eq(reported[4].source, "/proc/cpuinfo");
  ck_assert_int_eq(reported[4].verdict, PERSECOND_NOT_A_NUMBER);
  ck_assert_str_eq(reported[4].text, "2400,000");
  ck_assert_str_eq(reported[4].unit, "MHz");
  ck_assert_str_eq(reported[5].source, "cpucyclespersecond");
  ck_assert_int_eq(reported[5].verdict, PERSECOND_ACCEPTED);
  ck_assert_str_eq(reported[5].text, "3100000000");
  ck_assert_int_eq(reported[5].value, 3100000000LL);
}
END_TEST

/* The first source that answers ends the list: no later one is read. */
START_TEST(test_reported_stops_at_the_answer)
{
  FILE *f = tmp_create("/etc", "/cpucyclespersecond");
  fputs("  2.4e9  # the nominal rate\n", f);
  fclose(f);
  ck_assert_int_eq(estimate_reported("3100000000"), 2400000000LL);
  ck_assert_int_eq(nreported, 1);
  ck_assert_int_eq(reported[0].verdict, PERSECOND_ACCEPTED);
  ck_assert_int_eq(reported[0].value, 2400000000LL);
}
END_TEST

/* cpuinfo without a frequency line, no variable: the default answers, and
 * says so; a setting file that cannot be read is not "absent". */
START_TEST(test_reported_default)
{
  FILE *f;
  char path[128];

  snprintf(path, sizeof path, "%s/etc", tmproot);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  snprintf(path, sizeof path, "%s/etc/cpucyclespersecond", tmproot);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  f = tmp_create("/proc", "/cpuinfo");
  fputs("processor\t: 0\nclock\t\t: 2000.000000\n\n", f);
  fclose(f);

  ck_assert_int_eq(estimate_reported(NULL), CPUCYCLES_PERSECOND_DEFAULT);
  ck_assert_int_eq(nreported, 7);
  ck_assert_int_eq(reported[0].verdict, PERSECOND_UNREADABLE);
  ck_assert_int_eq(reported[0].error, EISDIR);
  /* "clock" needs its MHz suffix */
  ck_assert_int_eq(reported[4].verdict, PERSECOND_NOT_A_NUMBER);
  ck_assert_str_eq(reported[4].text, "2000.000000");
  ck_assert_str_eq(reported[5].source, "cpucyclespersecond");
  ck_assert_int_eq(reported[5].verdict, PERSECOND_ABSENT);
  ck_assert_str_eq(reported[6].source, "default");
  ck_assert_int_eq(reported[6].verdict, PERSECOND_ACCEPTED);
  ck_assert_int_eq(reported[6].value, CPUCYCLES_PERSECOND_DEFAULT);

  f = tmp_create("/proc", "/cpuinfo");
  fputs("processor\t: 0\nbogomips\t: 4800.00\n\n", f);
  fclose(f);
  estimate_reported(NULL);
  ck_assert_int_eq(reported[4].verdict, PERSECOND_NO_VALUE);
  ck_assert_str_eq(reported[4].text, "(null)");
}
END_TEST
#endif /* !_WIN32 */

static Suite *persecond_suite(void)
{
  Suite *s = suite_create("persecond");
  TCase *tc;

  tc = tcase_create("parse");
  tcase_add_loop_test(tc, test_parse_table, 0,
                      (int)(sizeof parse_cases / sizeof parse_cases[0]));
  tcase_add_test(tc, test_parse_bad_arguments);
  tcase_add_test(tc, test_parse_long_input);
  suite_add_tcase(s, tc);

  tc = tcase_create("fixtures");
  tcase_add_loop_test(tc, test_fixture_table, 0,
                      (int)(sizeof fixture_cases / sizeof fixture_cases[0]));
  tcase_add_loop_test(tc, test_malformed_matrix, 0, 3 * FORMS);
  tcase_add_test(tc, test_env_values);
  suite_add_tcase(s, tc);

#ifndef _WIN32
  tc = tcase_create("generated");
  tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
  tcase_add_test(tc, test_cpuinfo_long_line);
  tcase_add_test(tc, test_cpuinfo_within_limit);
  tcase_add_test(tc, test_cpuinfo_beyond_limit);
  tcase_add_test(tc, test_cpuinfo_cut_at_limit);
  tcase_add_test(tc, test_etc_number_cut_at_limit);
  tcase_add_test(tc, test_etc_number_before_limit);
  tcase_add_test(tc, test_etc_fifo);
  tcase_add_test(tc, test_etc_directory);
  tcase_add_test(tc, test_reported_sources);
  tcase_add_test(tc, test_reported_stops_at_the_answer);
  tcase_add_test(tc, test_reported_default);
  suite_add_tcase(s, tc);
#endif

  tc = tcase_create("system");
  tcase_add_test(tc, test_real_system);
  tcase_add_test(tc, test_root_too_long);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return run_suite(persecond_suite());
}
