/* The CPU frequency estimate: one small function per source, tried in
 * the order of doc/persecond.md (the original's, up to the variable), the
 * first plausible value winning.  No strtod: it honours LC_NUMERIC
 * ("2400.000" under a decimal comma). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "persecond.h"
#include "readfile.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#ifdef HAVE_SYSCTLBYNAME
#include <sys/types.h>
#include <sys/sysctl.h>
#endif

#ifdef _WIN32
#include "persecond-windows.h"
#endif

/* Plausible CPU frequencies in Hz: 1 MHz (slow embedded cores, emulators)
 * to 100 GHz (rejects unit mistakes, Hz in a kHz file). */
#define PERSECOND_MIN 1000000ULL
#define PERSECOND_MAX 100000000000ULL

/* Significant digits kept exactly (10^18 < 2^64); plausible values have
 * at most 12, later ones only make the value "sticky". */
#define MANTISSA_DIGITS 18

/* Exponents are clamped here: far beyond plausible, far from overflow. */
#define EXPONENT_CLAMP 100000

/* How much of /etc/cpucyclespersecond is read (a comment may follow), and
 * of a sysfs file (a dozen bytes; 65, one more than cpucycles-info shows
 * of a text, so that it can tell a cut one). */
#define SETTING_FILE_BYTES 256
#define SYSFS_FILE_BYTES 65

/* /proc/cpuinfo: at most this much (the kernel formats every block asked
 * for: hundreds of KiB on 256 cores), through a window on the first call's
 * stack; longer lines (x86's flags) are not ours. */
#define CPUINFO_LIMIT 65536
#define CPUINFO_WINDOW 256

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_blank(char c) { return c == ' ' || c == '\t'; }
static int is_space(char c) { return is_blank(c) || c == '\n' || c == '\r'; }

/* mantissa * 10^exponent; sticky: nonzero digits dropped. */
struct decimal {
  uint64_t mantissa;
  int digits;        /* significant digits in mantissa, no leading zeros */
  int exponent;
  int sticky;
};

static void shift_exponent(struct decimal *d, long by)
{
  long e = (long) d->exponent + by;
  if (e > EXPONENT_CLAMP) e = EXPONENT_CLAMP;
  if (e < -EXPONENT_CLAMP) e = -EXPONENT_CLAMP;
  d->exponent = (int) e;
}

/* The digits at text[*i..) of the integer part or the fraction; returns
 * how many.  A leading zero moves only a fraction along; a digit past
 * MANTISSA_DIGITS is dropped (an integer one shifting d). */
static size_t scan_digits(const char *text, size_t len, size_t *i,
                          struct decimal *d, int fraction)
{
  size_t start = *i;
  for (; *i < len && is_digit(text[*i]); ++*i) {
    char c = text[*i];
    if (d->digits == MANTISSA_DIGITS) {
      if (c != '0') d->sticky = 1;
      if (!fraction) shift_exponent(d, 1);
      continue;
    }
    if (d->digits > 0 || c != '0') {
      d->mantissa = d->mantissa * 10 + (uint64_t) (c - '0');
      ++d->digits;
    }
    if (fraction) shift_exponent(d, -1);
  }
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
  for (start = *i; *i < len && is_digit(text[*i]); ++*i)
    if (value < EXPONENT_CLAMP) value = value * 10 + (text[*i] - '0');
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

/* The exact value of d, checked for plausibility, rounded halves up. */
static int decimal_to_hz(const struct decimal *d, long long *out)
{
  uint64_t whole, rest = 0, divisor = 1;
  if (d->mantissa == 0) return -1;
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
  if (whole < PERSECOND_MIN || whole > PERSECOND_MAX) return -1;
  if (whole == PERSECOND_MAX && (rest || d->sticky)) return -1;
  /* divisor is 1 or a multiple of 10: sticky digits cannot carry rest
   * across one half. */
  if (2 * rest >= divisor && divisor > 1) ++whole;
  *out = (long long) whole;
  return 0;
}

/* cpucycles_persecond_parse, saying why it refuses. */
static enum persecond_verdict parse_verdict(const char *text, size_t len,
                                            int form, int unit,
                                            long long *out)
{
  struct decimal d = { 0, 0, 0, 0 };
  size_t i = 0;

  if (!text || !out || form < PERSECOND_INTEGER || form > PERSECOND_SETTING
      || unit < 0 || unit > 9)
    return PERSECOND_NOT_A_NUMBER;
  if (form == PERSECOND_SETTING)
    while (i < len && is_space(text[i])) ++i;
  if (!scan_digits(text, len, &i, &d, 0)) return PERSECOND_NOT_A_NUMBER;
  if (form != PERSECOND_INTEGER && i < len && text[i] == '.') {
    ++i;
    if (!scan_digits(text, len, &i, &d, 1)) return PERSECOND_NOT_A_NUMBER;
  }
  if (form == PERSECOND_SETTING && i < len
      && (text[i] == 'e' || text[i] == 'E')) {
    long exponent;
    ++i;
    if (scan_exponent(text, len, &i, &exponent) < 0)
      return PERSECOND_NOT_A_NUMBER;
    shift_exponent(&d, exponent);
  }
  if (form == PERSECOND_SETTING) {
    /* the end, or a blank and then a comment, which is not read */
    if (i < len && !is_space(text[i])) return PERSECOND_NOT_A_NUMBER;
  } else {
    while (i < len && is_space(text[i])) ++i;
    if (i != len) return PERSECOND_NOT_A_NUMBER;
  }
  shift_exponent(&d, unit);
  return decimal_to_hz(&d, out) == 0 ? PERSECOND_ACCEPTED
                                     : PERSECOND_IMPLAUSIBLE;
}

int cpucycles_persecond_parse(const char *text, size_t len, int form,
                              int unit, long long *out)
{
  return parse_verdict(text, len, form, unit, out) == PERSECOND_ACCEPTED
         ? 0 : -1;
}

/* Where the verdicts go: nowhere in the first call, else to --explain. */
struct judge {
  const char *root;
  persecond_report_fn *report;
  void *arg;
};

/* An array of arrays, not of pointers: no relocation, read-only. */
static const char unit_names[10][4] = {
  "Hz", "", "", "kHz", "", "", "MHz", "", "", "GHz"
};

/* Reports what became of source; 0 for an accepted value, else -1. */
static int judged(const struct judge *j, const char *source,
                  enum persecond_verdict verdict, const char *text,
                  size_t len, int unit, int error, long long value)
{
  if (j->report) {
    struct persecond_source s = {
      source, verdict, text, text ? len : 0,
      unit >= 0 && unit <= 9 && *unit_names[unit] ? unit_names[unit] : 0,
      error, verdict == PERSECOND_ACCEPTED ? value : 0
    };
    j->report(&s, j->arg);
  }
  return verdict == PERSECOND_ACCEPTED ? 0 : -1;
}

/* A file that could not be read: absent, or there but unreadable. */
static int judged_unread(const struct judge *j, const char *path, int error)
{
  if (error == ENOENT || error == ENOTDIR)
    return judged(j, path, PERSECOND_ABSENT, 0, 0, -1, 0, 0);
  return judged(j, path, PERSECOND_UNREADABLE, 0, 0, -1, error, 0);
}

/* A sysfs file (one that fills the buffer is refused) or the setting file
 * (cut after its last blank when it goes on, so that a number cut by the
 * buffer's end is not taken for a shorter one). */
static int persecond_from_file(const struct judge *j, const char *path,
                               int form, int unit, long long *out)
{
  char buf[SETTING_FILE_BYTES];
  size_t size = form == PERSECOND_SETTING ? sizeof buf : SYSFS_FILE_BYTES;
  int full;
  ssize_t len = cpucycles_read_file_start(j->root, path, buf, size, &full);
  enum persecond_verdict v = PERSECOND_NOT_A_NUMBER;
  if (len < 0) return judged_unread(j, path, errno);
  if (full && form == PERSECOND_SETTING) {
    ssize_t cut = len;
    while (cut > 0 && !is_space(buf[cut - 1])) --cut;
    if (cut > 0) { len = cut; full = 0; }
  }
  if (!full) v = parse_verdict(buf, (size_t) len, form, unit, out);
  return judged(j, path, v, buf, (size_t) len, unit, 0, *out);
}

/* The frequency keys, in the original's priority. */
enum cpuinfo_rank { RANK_CPU_MHZ, RANK_CLOCK, RANK_CPU_MHZ_STATIC, RANK_NONE };

/* Of a refused value, one byte more than cpucycles-info shows. */
#define CPUINFO_BAD_TEXT 65

struct cpuinfo_scan {
  int inprocessor;        /* in the first processor's block */
  enum cpuinfo_rank rank; /* of the best value found so far */
  long long value;
  /* the first frequency line refused (PERSECOND_NO_VALUE: none) */
  enum persecond_verdict bad;
  char bad_text[CPUINFO_BAD_TEXT];
  size_t bad_len;
};

static int key_is(const char *key, size_t keylen, const char *name)
{
  return keylen == strlen(name) && memcmp(key, name, keylen) == 0;
}

/* The rank of a frequency key and its value in Hz; RANK_NONE when the key
 * is not ours (*verdict PERSECOND_NO_VALUE) or its value is refused. */
static enum cpuinfo_rank cpuinfo_value(const char *key, size_t keylen,
                                       const char *value, size_t valuelen,
                                       long long *out,
                                       enum persecond_verdict *verdict)
{
  enum cpuinfo_rank rank;
  *verdict = PERSECOND_NO_VALUE;
  if (key_is(key, keylen, "cpu MHz")) {   /* "cpu MHz\t\t: 2400.000" */
    rank = RANK_CPU_MHZ;
  } else if (key_is(key, keylen, "clock")) {
    /* powerpc: "clock\t\t: 2000.000000MHz"; the suffix is required. */
    while (valuelen > 0 && is_space(value[valuelen - 1])) --valuelen;
    if (valuelen < 3 || memcmp(value + valuelen - 3, "MHz", 3) != 0) {
      *verdict = PERSECOND_NOT_A_NUMBER;
      return RANK_NONE;
    }
    valuelen -= 3;
    rank = RANK_CLOCK;
  } else if (key_is(key, keylen, "cpu MHz static")) {
    /* s390x, recent kernels: the nominal rate ("cpu MHz dynamic" is the
     * current one, not used). */
    rank = RANK_CPU_MHZ_STATIC;
  } else {
    return RANK_NONE;
  }
  *verdict = parse_verdict(value, valuelen, PERSECOND_DECIMAL, 6, out);
  return *verdict == PERSECOND_ACCEPTED ? rank : RANK_NONE;
}

/* One line "key<blanks>:<blanks>value"; nonzero stops the reading.  A
 * processor's block has a "processor" key, or "cpu number" on s390x (after
 * a summary block).  The blank line ending the first one stops the scan
 * (later blocks cost time to format), as does "cpu MHz", never outranked. */
static int cpuinfo_line(const char *line, size_t len, void *arg)
{
  struct cpuinfo_scan *scan = arg;
  const char *colon;
  size_t keylen, i;
  long long value = 0; /* set by cpuinfo_value() for every rank but RANK_NONE */
  enum cpuinfo_rank rank;
  enum persecond_verdict verdict;
  for (i = 0; i < len && is_space(line[i]); ++i) {}
  if (i == len) return scan->inprocessor;
  colon = memchr(line, ':', len);
  if (!colon) return 0;
  keylen = (size_t) (colon - line);
  while (keylen > 0 && is_blank(line[keylen - 1])) --keylen;
  if (key_is(line, keylen, "processor") || key_is(line, keylen, "cpu number"))
    scan->inprocessor = 1;
  i = (size_t) (colon - line) + 1;
  while (i < len && is_blank(line[i])) ++i;
  rank = cpuinfo_value(line, keylen, line + i, len - i, &value, &verdict);
  if (rank == RANK_NONE && verdict != PERSECOND_NO_VALUE
      && scan->bad == PERSECOND_NO_VALUE) {
    scan->bad = verdict;
    scan->bad_len = len - i < CPUINFO_BAD_TEXT ? len - i : CPUINFO_BAD_TEXT;
    memcpy(scan->bad_text, line + i, scan->bad_len);
  }
  if (rank < scan->rank) {   /* the first line of each key counts */
    scan->rank = rank;
    scan->value = value;
  }
  return scan->rank == RANK_CPU_MHZ;
}

/* The best-ranked key's value (a line cut by CPUINFO_LIMIT is not read). */
static int persecond_from_cpuinfo(const struct judge *j, long long *out)
{
  static const char path[] = "/proc/cpuinfo";
  char buf[CPUINFO_WINDOW];
  struct cpuinfo_scan scan = { 0, RANK_NONE, 0, PERSECOND_NO_VALUE, "", 0 };
  if (cpucycles_read_lines(j->root, path, CPUINFO_LIMIT, buf, sizeof buf,
                           cpuinfo_line, &scan) == -1)
    return judged_unread(j, path, errno);
  if (scan.rank == RANK_NONE)
    return judged(j, path, scan.bad,
                  scan.bad == PERSECOND_NO_VALUE ? 0 : scan.bad_text,
                  scan.bad_len, 6, 0, 0);
  *out = scan.value;
  return judged(j, path, PERSECOND_ACCEPTED, 0, 0, 6, 0, scan.value);
}

#ifdef HAVE_SYSCTLBYNAME
/* macOS hw.cpufrequency (int64_t; absent on Apple silicon), FreeBSD
 * machdep.tsc_freq (uint64_t): a negative int64_t reads as a huge
 * uint64_t and is refused. */
static int persecond_from_sysctl(const struct judge *j, const char *source,
                                 long long *out)
{
  union { uint64_t u64; uint32_t u32; } value;
  size_t len = sizeof value;
  uint64_t hz;
  if (sysctlbyname(source + sizeof "sysctl " - 1, &value, &len, NULL, 0) != 0)
    return judged(j, source, PERSECOND_ABSENT, 0, 0, 0, 0, 0);
  if (len == sizeof value.u64) hz = value.u64;
  else if (len == sizeof value.u32) hz = value.u32;
  else return judged(j, source, PERSECOND_NOT_A_NUMBER, 0, 0, 0, 0, 0);
  if (hz < PERSECOND_MIN || hz > PERSECOND_MAX)
    return judged(j, source, PERSECOND_IMPLAUSIBLE, 0, 0, 0, 0, 0);
  *out = (long long) hz;
  return judged(j, source, PERSECOND_ACCEPTED, 0, 0, 0, 0, *out);
}
#endif

#ifdef _WIN32
/* Windows has no /etc, /sys or /proc: processor 0's "~MHz" instead. */
static int persecond_from_registry(const struct judge *j, long long *out)
{
  int found = cpucycles_persecond_from_registry(HKEY_LOCAL_MACHINE,
                                                CPUCYCLES_REGISTRY_CPU0,
                                                out) == 0;
  return judged(j, "registry ~MHz of CentralProcessor\\0",
                found ? PERSECOND_ACCEPTED : PERSECOND_ABSENT, 0, 0, -1, 0,
                *out);
}
#endif

#define CPU0 "/sys/devices/system/cpu/cpu0"

/* Sources 1 to 5, under the root. */
static int persecond_from_files(const struct judge *j, long long *out)
{
  if (persecond_from_file(j, "/etc/cpucyclespersecond", PERSECOND_SETTING,
                          0, out) == 0
      || persecond_from_file(j, CPU0 "/cpufreq/scaling_setspeed",
                             PERSECOND_INTEGER, 3, out) == 0
      || persecond_from_file(j, CPU0 "/cpufreq/scaling_max_freq",
                             PERSECOND_INTEGER, 3, out) == 0
      || persecond_from_file(j, CPU0 "/clock_tick", PERSECOND_INTEGER, 0,
                             out) == 0)
    return 0;
  return persecond_from_cpuinfo(j, out);
}

static int persecond_from_env(const struct judge *j, const char *envvalue,
                              long long *out)
{
  static const char name[] = "cpucyclespersecond";
  size_t len;
  enum persecond_verdict v;
  if (!envvalue) return judged(j, name, PERSECOND_ABSENT, 0, 0, 0, 0, 0);
  len = strlen(envvalue);
  v = parse_verdict(envvalue, len, PERSECOND_SETTING, 0, out);
  return judged(j, name, v, envvalue, len, 0, 0, *out);
}

long long cpucycles_persecond_estimate(const char *root, const char *envvalue)
{
  return cpucycles_persecond_estimate_reported(root, envvalue, 0, 0);
}

long long cpucycles_persecond_estimate_reported(const char *root,
                                                const char *envvalue,
                                                persecond_report_fn *report,
                                                void *arg)
{
  struct judge j = { root ? root : "", report, arg };
  long long result = 0;
#ifdef _WIN32
  /* A fixture root (tests) is read as on every other system. */
  if (!*j.root ? persecond_from_registry(&j, &result) == 0
               : persecond_from_files(&j, &result) == 0)
    return result;
#else
  if (persecond_from_files(&j, &result) == 0) return result;
#endif
#ifdef HAVE_SYSCTLBYNAME
  /* sysctl cannot be redirected under a fixture root: real system only. */
  if (!*j.root
      && persecond_from_sysctl(&j, "sysctl hw.cpufrequency", &result) == 0)
    return result;
#endif
  if (persecond_from_env(&j, envvalue, &result) == 0) return result;
#ifdef HAVE_SYSCTLBYNAME
  if (!*j.root
      && persecond_from_sysctl(&j, "sysctl machdep.tsc_freq", &result) == 0)
    return result;
#endif
  judged(&j, "default", PERSECOND_ACCEPTED, 0, 0, 0, 0,
         CPUCYCLES_PERSECOND_DEFAULT);
  return CPUCYCLES_PERSECOND_DEFAULT;
}
