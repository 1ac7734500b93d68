/* The CPU frequency estimate behind cpucycles_persecond().
 *
 * One small function per source, tried in order; the first source that
 * yields a plausible value wins (doc/persecond.md).  Up to the environment
 * variable, the sources and their order are the original libcpucycles':
 *
 *   1. ROOT/etc/cpucyclespersecond                         Hz, a setting
 *   2. ROOT/sys/devices/system/cpu/cpu0/cpufreq/scaling_setspeed   kHz
 *   3. ROOT/sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq   kHz
 *   4. ROOT/sys/devices/system/cpu/cpu0/clock_tick         Hz (SPARC)
 *   5. ROOT/proc/cpuinfo, first processor's block: "cpu MHz", else "clock",
 *      else "cpu MHz static"                               MHz
 *   6. sysctlbyname("hw.cpufrequency"), real system only    Hz (macOS)
 *   7. the cpucyclespersecond environment variable        Hz, a setting
 *   8. sysctlbyname("machdep.tsc_freq"), real system only   Hz (FreeBSD;
 *      not in the original, hence after everything it has)
 *   9. CPUCYCLES_PERSECOND_DEFAULT
 *
 * scaling_setspeed holds the frequency the userspace governor pins (a
 * benchmarking machine's setting) and reads "<unsupported>" under other
 * governors; scaling_max_freq is the policy limit.
 *
 * No malloc and no stdio (fopen allocates): open(O_CLOEXEC) and read() into
 * stack buffers.  No strtod either: it honours LC_NUMERIC, so "2400.000"
 * would not parse under a locale with a decimal comma; the parser below
 * works in exact integer decimal arithmetic instead. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

/* O_CLOEXEC is POSIX.1-2008, which -std=c11 alone hides on glibc; configure
 * normally defines _GNU_SOURCE (AC_USE_SYSTEM_EXTENSIONS) in config.h.  Not
 * done on the BSDs and macOS, where it would hide sysctlbyname. */
#if defined(__linux__) && !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "persecond.h"
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_SYSCTLBYNAME
#include <sys/types.h>
#include <sys/sysctl.h>
#endif

#ifdef _WIN32
#include "persecond-windows.h"
#endif

/* Plausible CPU frequencies in Hz, inclusive: 1 MHz (slow embedded cores,
 * some emulators) to 100 GHz (far beyond any CPU; rejects unit mistakes
 * such as Hz written into a kHz file). */
#define PERSECOND_MIN 1000000ULL
#define PERSECOND_MAX 100000000000ULL

/* Significant digits kept exactly: 10^18 < 2^64.  Plausible values have at
 * most 12 integer digits, so the ones past 18 only decide whether the exact
 * value lies above the kept part ("sticky"). */
#define MANTISSA_DIGITS 18

/* Exponents are clamped here: far beyond any plausible value either way,
 * and far from int overflow however long the input. */
#define EXPONENT_CLAMP 100000

/* /etc/cpucyclespersecond: how much of the file is read; a comment after
 * the number may make the file longer (doc/persecond.md). */
#define SETTING_FILE_BYTES 256

/* /proc/cpuinfo: stop after this many bytes even without a block end.  On a
 * 256-core machine the whole file is hundreds of kilobytes, and the kernel
 * formats every processor block it is asked for. */
#define CPUINFO_LIMIT 65536

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int is_space(char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* A decimal number as mantissa * 10^exponent, plus whether nonzero digits
 * were dropped past the mantissa's MANTISSA_DIGITS. */
struct decimal {
  uint64_t mantissa;
  int digits;        /* significant digits in mantissa, no leading zeros */
  int exponent;
  int sticky;
};

static void shift_exponent(struct decimal *d, long by)
{
  long e = (long)d->exponent + by;
  if (e > EXPONENT_CLAMP) e = EXPONENT_CLAMP;
  if (e < -EXPONENT_CLAMP) e = -EXPONENT_CLAMP;
  d->exponent = (int)e;
}

/* One more digit, of the integer part (fraction 0) or of the fraction. */
static void push_digit(struct decimal *d, char c, int fraction)
{
  if (d->digits == 0 && c == '0') {
    /* a leading zero: no significance, but it moves a fraction along */
  } else if (d->digits < MANTISSA_DIGITS) {
    d->mantissa = d->mantissa * 10 + (uint64_t)(c - '0');
    ++d->digits;
  } else {
    if (c != '0') d->sticky = 1;
    if (!fraction) shift_exponent(d, 1);   /* a dropped integer digit */
    return;
  }
  if (fraction) shift_exponent(d, -1);
}

/* Digits at text[*i..); returns how many there were. */
static size_t scan_digits(const char *text, size_t len, size_t *i,
                          struct decimal *d, int fraction)
{
  size_t start = *i;
  while (*i < len && is_digit(text[*i])) push_digit(d, text[(*i)++], fraction);
  return *i - start;
}

/* The exponent after "e": [sign] digits, clamped. */
static int scan_exponent(const char *text, size_t len, size_t *i, long *out)
{
  long value = 0;
  int negative = 0;
  size_t start;

  if (*i < len && (text[*i] == '+' || text[*i] == '-'))
    negative = text[(*i)++] == '-';
  start = *i;
  while (*i < len && is_digit(text[*i])) {
    if (value < EXPONENT_CLAMP) value = value * 10 + (text[*i] - '0');
    ++*i;
  }
  if (*i == start) return -1;
  *out = negative ? -value : value;
  return 0;
}

static uint64_t power_of_ten(int n)
{
  uint64_t p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

/* The exact value of d, checked against the plausible range, rounded to
 * the nearest integer, halves up. */
static int decimal_to_hz(const struct decimal *d, long long *out)
{
  uint64_t whole;
  uint64_t rest = 0;
  uint64_t divisor = 1;

  if (d->mantissa == 0) return -1;                 /* zero */
  /* d lies in [10^(digits-1+exponent), 10^(digits+exponent)). */
  if (d->digits - 1 + d->exponent > 11) return -1; /* >= 10^12 */
  if (d->digits + d->exponent <= 6) return -1;     /* < 10^6 */
  /* So -12 < exponent < 12, and no product below exceeds 10^18. */
  if (d->exponent >= 0) {
    whole = d->mantissa * power_of_ten(d->exponent);
  } else {
    divisor = power_of_ten(-d->exponent);
    whole = d->mantissa / divisor;
    rest = d->mantissa % divisor;
  }
  if (whole < PERSECOND_MIN) return -1;
  if (whole > PERSECOND_MAX) return -1;
  if (whole == PERSECOND_MAX && (rest || d->sticky)) return -1;
  /* divisor is 1 or a multiple of 10, so the sticky digits cannot carry
   * rest across one half. */
  if (2 * rest >= divisor && divisor > 1) ++whole;
  *out = (long long)whole;
  return 0;
}

int cpucycles_persecond_parse(const char *text, size_t len, int form,
                              int unit, long long *out)
{
  struct decimal d = { 0, 0, 0, 0 };
  size_t i = 0;

  if (!text || !out) return -1;
  if (form != PERSECOND_INTEGER && form != PERSECOND_DECIMAL
      && form != PERSECOND_SETTING)
    return -1;
  if (unit < 0 || unit > 9) return -1;   /* Hz .. GHz */

  if (form == PERSECOND_SETTING)
    while (i < len && is_space(text[i])) ++i;

  if (!scan_digits(text, len, &i, &d, 0)) return -1;
  if (form != PERSECOND_INTEGER && i < len && text[i] == '.') {
    ++i;
    if (!scan_digits(text, len, &i, &d, 1)) return -1;
  }
  if (form == PERSECOND_SETTING && i < len
      && (text[i] == 'e' || text[i] == 'E')) {
    long exponent;
    ++i;
    if (scan_exponent(text, len, &i, &exponent) < 0) return -1;
    shift_exponent(&d, exponent);
  }

  if (form == PERSECOND_SETTING) {
    /* The end, or a blank and then a comment, which is not read. */
    if (i < len && !is_space(text[i])) return -1;
  } else {
    while (i < len && is_space(text[i])) ++i;
    if (i != len) return -1;
  }

  shift_exponent(&d, unit);
  return decimal_to_hz(&d, out);
}

/* A sysfs file holding one integer in the given unit, as the kernel writes
 * it: a dozen bytes with the newline.  One that fills the buffer is not. */
static int persecond_from_sysfs(const char *root, const char *path, int unit,
                                long long *out)
{
  char buf[64];
  int full;
  ssize_t len = cpucycles_read_file_start(root, path, buf, sizeof buf, &full);

  if (len < 0 || full) return -1;
  return cpucycles_persecond_parse(buf, (size_t)len, PERSECOND_INTEGER, unit,
                                   out);
}

/* /etc/cpucyclespersecond, written by a person: the number and maybe a
 * comment, of which only the first SETTING_FILE_BYTES are read.  When the
 * file goes on past them, the text is cut after its last blank, so that a
 * number cut by the buffer's end is not taken for a shorter one. */
static int persecond_from_setting_file(const char *root, const char *path,
                                       long long *out)
{
  char buf[SETTING_FILE_BYTES];
  int full;
  ssize_t len = cpucycles_read_file_start(root, path, buf, sizeof buf, &full);

  if (len < 0) return -1;
  if (full) {
    while (len > 0 && !is_space(buf[len - 1])) --len;
    if (len == 0) return -1;
  }
  return cpucycles_persecond_parse(buf, (size_t)len, PERSECOND_SETTING, 0,
                                   out);
}

/* cpuinfo lines are "key<spaces/tabs>:<spaces/tabs>value". */
enum cpuinfo_step { CPUINFO_GO_ON, CPUINFO_STOP };

/* The frequency keys, in the original's priority: it looks for the first
 * "cpu MHz" line, then, if none, for the first "clock" line, then for the
 * first "cpu MHz static" line. */
enum cpuinfo_rank { RANK_CPU_MHZ, RANK_CLOCK, RANK_CPU_MHZ_STATIC, RANK_NONE };

struct cpuinfo_scan {
  int inprocessor;        /* in the first processor's block */
  enum cpuinfo_rank rank; /* of the best value found so far */
  long long value;
};

static int key_is(const char *key, size_t keylen, const char *name)
{
  return keylen == strlen(name) && memcmp(key, name, keylen) == 0;
}

/* The rank of a frequency key and its value in Hz; RANK_NONE when the key
 * is not one of ours or its value is malformed (a bad line is skipped like
 * an unknown one). */
static enum cpuinfo_rank cpuinfo_value(const char *key, size_t keylen,
                                       const char *value, size_t valuelen,
                                       long long *out)
{
  /* x86 and most others: "cpu MHz\t\t: 2400.000" */
  if (key_is(key, keylen, "cpu MHz"))
    return cpucycles_persecond_parse(value, valuelen, PERSECOND_DECIMAL, 6,
                                     out) == 0 ? RANK_CPU_MHZ : RANK_NONE;
  /* powerpc: "clock\t\t: 2000.000000MHz"; the suffix is required. */
  if (key_is(key, keylen, "clock")) {
    while (valuelen > 0 && is_space(value[valuelen - 1])) --valuelen;
    if (valuelen < 3 || memcmp(value + valuelen - 3, "MHz", 3) != 0)
      return RANK_NONE;
    return cpucycles_persecond_parse(value, valuelen - 3, PERSECOND_DECIMAL,
                                     6, out) == 0 ? RANK_CLOCK : RANK_NONE;
  }
  /* s390x, recent kernels: "cpu MHz static  : 5200", the nominal rate.
   * Its sibling "cpu MHz dynamic" is the current rate: not used. */
  if (key_is(key, keylen, "cpu MHz static"))
    return cpucycles_persecond_parse(value, valuelen, PERSECOND_DECIMAL, 6,
                                     out) == 0 ? RANK_CPU_MHZ_STATIC
                                               : RANK_NONE;
  return RANK_NONE;
}

/* One line (without its newline).  scan->inprocessor records whether we
 * are in a processor's block: one with a "processor" key (x86, arm,
 * powerpc) or a "cpu number" key (s390x, whose blocks follow a summary
 * block that also ends in a blank line).  The blank line ending that first
 * block stops the scan: later blocks describe other processors and cost
 * time to format.  So does a "cpu MHz" value, which nothing outranks. */
static enum cpuinfo_step cpuinfo_line(const char *line, size_t len,
                                      struct cpuinfo_scan *scan)
{
  const char *colon;
  size_t keylen;
  size_t i;
  long long value;
  enum cpuinfo_rank rank;

  for (i = 0; i < len && is_space(line[i]); ++i) {}
  if (i == len) return scan->inprocessor ? CPUINFO_STOP : CPUINFO_GO_ON;

  colon = memchr(line, ':', len);
  if (!colon) return CPUINFO_GO_ON;
  keylen = (size_t)(colon - line);
  while (keylen > 0 && is_blank(line[keylen - 1])) --keylen;

  if (key_is(line, keylen, "processor") || key_is(line, keylen, "cpu number"))
    scan->inprocessor = 1;

  i = (size_t)(colon - line) + 1;
  while (i < len && is_blank(line[i])) ++i;
  rank = cpuinfo_value(line, keylen, line + i, len - i, &value);
  if (rank < scan->rank) {   /* the first line of each key counts */
    scan->rank = rank;
    scan->value = value;
  }
  return scan->rank == RANK_CPU_MHZ ? CPUINFO_STOP : CPUINFO_GO_ON;
}

/* Read /proc/cpuinfo line by line through a small window, stopping at the
 * first "cpu MHz" value, at the end of the first processor's block, or at
 * CPUINFO_LIMIT bytes, and keep the value of the best-ranked key seen.  A
 * line longer than the window (none of ours is) is skipped whole. */
static int persecond_from_cpuinfo(const char *root, long long *out)
{
  char buf[4096];
  size_t have = 0;
  size_t total = 0;
  int skipping = 0;
  struct cpuinfo_scan scan = { 0, RANK_NONE, 0 };
  int fd = cpucycles_open_under(root, "/proc/cpuinfo");

  if (fd < 0) return -1;
  while (total < CPUINFO_LIMIT) {
    size_t want = sizeof buf - have;
    size_t start = 0;
    const char *newline;
    ssize_t r;
    enum cpuinfo_step step = CPUINFO_GO_ON;

    if (want > CPUINFO_LIMIT - total) want = CPUINFO_LIMIT - total;
    r = cpucycles_read_retrying(fd, buf + have, want);
    if (r < 0) break;
    have += (size_t)r;
    total += (size_t)r;

    while (step == CPUINFO_GO_ON
           && (newline = memchr(buf + start, '\n', have - start))) {
      size_t linelen = (size_t)(newline - (buf + start));
      if (skipping) skipping = 0;
      else step = cpuinfo_line(buf + start, linelen, &scan);
      start += linelen + 1;
    }
    /* At end of file the last line may lack its newline; a line cut off
     * by CPUINFO_LIMIT is not read ("24" of "2400.000" is no value). */
    if (step == CPUINFO_GO_ON && r == 0 && !skipping && start < have)
      step = cpuinfo_line(buf + start, have - start, &scan);
    if (step != CPUINFO_GO_ON || r == 0) break;

    if (start == 0 && have == sizeof buf) {   /* a line longer than buf */
      skipping = 1;
      have = 0;
      continue;
    }
    memmove(buf, buf + start, have - start);
    have -= start;
  }
  close(fd);
  if (scan.rank == RANK_NONE) return -1;
  *out = scan.value;
  return 0;
}

#ifdef HAVE_SYSCTLBYNAME
/* macOS hw.cpufrequency (int64_t Hz on Intel Macs; absent on Apple
 * silicon), what the original reads with the sysctl command; FreeBSD
 * machdep.tsc_freq (uint64_t Hz).  Either width is accepted; a negative
 * int64_t reads as a huge uint64_t and is refused with the rest. */
static int persecond_from_sysctl(const char *name, long long *out)
{
  union { uint64_t u64; uint32_t u32; } value;
  size_t len = sizeof value;
  uint64_t hz;

  if (sysctlbyname(name, &value, &len, NULL, 0) != 0) return -1;
  if (len == sizeof value.u64) hz = value.u64;
  else if (len == sizeof value.u32) hz = value.u32;
  else return -1;
  if (hz < PERSECOND_MIN || hz > PERSECOND_MAX) return -1;
  *out = (long long)hz;
  return 0;
}
#endif

static int persecond_from_env(const char *envvalue, long long *out)
{
  if (!envvalue) return -1;
  return cpucycles_persecond_parse(envvalue, strlen(envvalue),
                                   PERSECOND_SETTING, 0, out);
}

#define CPU0 "/sys/devices/system/cpu/cpu0"

long long cpucycles_persecond_estimate(const char *root, const char *envvalue)
{
  long long result;

  if (!root) root = "";
#ifdef _WIN32
  /* Windows has no /etc, /sys or /proc: the registry's "~MHz" of
   * processor 0, then the variable, then the default.  A fixture root
   * (tests) is read as on every other system. */
  if (!*root) {
    if (cpucycles_persecond_from_registry(HKEY_LOCAL_MACHINE,
                                          CPUCYCLES_REGISTRY_CPU0,
                                          &result) == 0)
      return result;
    if (persecond_from_env(envvalue, &result) == 0)
      return result;
    return CPUCYCLES_PERSECOND_DEFAULT;
  }
#endif
  if (persecond_from_setting_file(root, "/etc/cpucyclespersecond",
                                  &result) == 0)
    return result;
  if (persecond_from_sysfs(root, CPU0 "/cpufreq/scaling_setspeed", 3,
                           &result) == 0)
    return result;
  if (persecond_from_sysfs(root, CPU0 "/cpufreq/scaling_max_freq", 3,
                           &result) == 0)
    return result;
  if (persecond_from_sysfs(root, CPU0 "/clock_tick", 0, &result) == 0)
    return result;
  if (persecond_from_cpuinfo(root, &result) == 0)
    return result;
#ifdef HAVE_SYSCTLBYNAME
  /* sysctl cannot be redirected under a fixture root: real system only. */
  if (!*root && persecond_from_sysctl("hw.cpufrequency", &result) == 0)
    return result;
#endif
  if (persecond_from_env(envvalue, &result) == 0)
    return result;
#ifdef HAVE_SYSCTLBYNAME
  if (!*root && persecond_from_sysctl("machdep.tsc_freq", &result) == 0)
    return result;
#endif
  return CPUCYCLES_PERSECOND_DEFAULT;
}
