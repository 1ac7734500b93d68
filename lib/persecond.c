/* The CPU frequency estimate behind cpucycles_persecond().
 *
 * One small function per source, tried in order; the first source that
 * yields a plausible value wins (doc/persecond.md):
 *
 *   1. ROOT/etc/cpucyclespersecond                       integer Hz
 *   2. ROOT/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq   kHz
 *      ROOT/sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq   kHz
 *      ROOT/sys/devices/system/cpu/cpu0/tsc_freq_khz               kHz
 *   3. ROOT/proc/cpuinfo, first processor's block only   MHz
 *   4. sysctlbyname, where it exists and only for the real system
 *   5. the cpucyclespersecond environment variable       integer Hz
 *   6. CPUCYCLES_PERSECOND_DEFAULT
 *
 * Why this order among the sysfs files: cpuinfo_max_freq is the hardware
 * limit the cpufreq driver reports, independent of the governor and of the
 * current (possibly idle, 800 MHz) frequency; benchmarking is done at a
 * pinned, turbo-off frequency, and intel_pstate and acpi-cpufreq report the
 * non-turbo maximum there once turbo is disabled.  scaling_max_freq is the
 * policy limit in the same directory: a fallback when the first is missing
 * or unreadable.  tsc_freq_khz is not upstream Linux (some vendor and cloud
 * kernels add it); it gives the TSC's nominal rate, the best guess on VMs
 * without cpufreq, so it comes after the cpufreq files but before the
 * "cpu MHz" of /proc/cpuinfo, which is an instantaneous sample.
 *
 * No malloc and no stdio (fopen allocates): open(O_CLOEXEC) and read() into
 * stack buffers.  No strtod either: it honours LC_NUMERIC, so "2400.000"
 * would not parse under a locale with a decimal comma. */
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

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_SYSCTLBYNAME
#include <stdint.h>
#include <sys/types.h>
#include <sys/sysctl.h>
#endif

/* Plausible CPU frequencies, inclusive: 1 MHz (slow embedded cores, some
 * emulators) to 100 GHz (far beyond any CPU; rejects unit mistakes such as
 * Hz written into a kHz file). */
#define PERSECOND_MIN 1e6
#define PERSECOND_MAX 1e11

/* Fraction digits past this many cannot change the rounded result for a
 * plausible value (unit <= 1e6 Hz), and keeping at most 15 of them keeps the
 * accumulated fraction exact in a double. */
#define FRACTION_DIGITS 15

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

int cpucycles_persecond_parse(const char *text, size_t len, double unit,
                              long long *out)
{
  double whole = 0;
  double fraction = 0;
  double scale = 1;
  double value;
  size_t i = 0;
  size_t digits = 0;

  if (!text || !out) return -1;
  /* Units are Hz, kHz, MHz (GHz would do too).  NaN fails both tests. */
  if (!(unit >= 1 && unit <= 1e9)) return -1;

  while (i < len && is_digit(text[i])) {
    /* Past 1e15 the value is implausible since unit >= 1; stop growing
     * (the digits are still consumed, so the syntax is still checked). */
    if (whole < 1e15) whole = whole * 10 + (text[i] - '0');
    else whole = 1e16;
    ++i;
    ++digits;
  }
  if (!digits) return -1;

  if (i < len && text[i] == '.') {
    ++i;
    digits = 0;
    while (i < len && is_digit(text[i])) {
      if (digits < FRACTION_DIGITS) {
        fraction = fraction * 10 + (text[i] - '0');
        scale *= 10;
      }
      ++i;
      ++digits;
    }
    if (!digits) return -1;
  }

  while (i < len && is_space(text[i])) ++i;
  if (i != len) return -1;

  value = whole * unit + fraction * unit / scale;
  if (!(value >= PERSECOND_MIN && value <= PERSECOND_MAX)) return -1;
  *out = (long long)(value + 0.5);
  return 0;
}

/* /etc, sysfs and the environment hold integers: "2400000000.5" Hz is
 * somebody's mistake, not a frequency. */
static int parse_integer(const char *text, size_t len, double unit,
                         long long *out)
{
  if (memchr(text, '.', len)) return -1;
  return cpucycles_persecond_parse(text, len, unit, out);
}

/* ROOT followed by path, into buf; -1 when it does not fit. */
static int path_under(char *buf, size_t size, const char *root,
                      const char *path)
{
  size_t rootlen = strlen(root);
  size_t pathlen = strlen(path);

  if (rootlen + pathlen + 1 > size) return -1;
  memcpy(buf, root, rootlen);
  memcpy(buf + rootlen, path, pathlen + 1);
  return 0;
}

static int open_under(const char *root, const char *path)
{
  char full[4096];
  int fd;

  if (path_under(full, sizeof full, root, path) < 0) return -1;
  /* O_NONBLOCK: a FIFO planted at the path must not hang the first
   * cpucycles() call; regular, proc and sysfs files ignore the flag. */
  do fd = open(full, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  while (fd < 0 && errno == EINTR);
  return fd;
}

static ssize_t read_once(int fd, char *buf, size_t len)
{
  ssize_t r;

  do r = read(fd, buf, len);
  while (r < 0 && errno == EINTR);
  return r;
}

/* Fill buf until end of file; short reads are normal for proc and sysfs.
 * Returns the length read, or -1 on error or when the file does not fit. */
static ssize_t read_small_file(const char *root, const char *path, char *buf,
                               size_t size)
{
  size_t have = 0;
  ssize_t result = -1;
  int fd = open_under(root, path);

  if (fd < 0) return -1;
  while (have < size) {   /* a file that fills buf is too long */
    ssize_t r = read_once(fd, buf + have, size - have);
    if (r < 0) break;
    if (r == 0) { result = (ssize_t)have; break; }
    have += (size_t)r;
  }
  close(fd);
  return result;
}

/* One file holding one integer in the given unit: /etc/cpucyclespersecond
 * and the sysfs files.  A sane value with its newline is a dozen bytes. */
static int persecond_from_file(const char *root, const char *path,
                               double unit, long long *out)
{
  char buf[64];
  ssize_t len = read_small_file(root, path, buf, sizeof buf);

  if (len < 0) return -1;
  return parse_integer(buf, (size_t)len, unit, out);
}

/* cpuinfo lines are "key<spaces/tabs>:<spaces/tabs>value". */
enum cpuinfo_step { CPUINFO_GO_ON, CPUINFO_FOUND, CPUINFO_STOP };

static int key_is(const char *key, size_t keylen, const char *name)
{
  return keylen == strlen(name) && memcmp(key, name, keylen) == 0;
}

/* The value of a recognised frequency key, in Hz; -1 when the key is not
 * one of ours or its value is malformed (scanning then goes on: a bad line
 * is skipped like an unknown one). */
static int cpuinfo_value(const char *key, size_t keylen, const char *value,
                         size_t valuelen, long long *out)
{
  /* x86 and most others: "cpu MHz\t\t: 2400.000" */
  if (key_is(key, keylen, "cpu MHz"))
    return cpucycles_persecond_parse(value, valuelen, 1e6, out);
  /* s390x, recent kernels: "cpu MHz static  : 5200", the nominal rate.
   * Its sibling "cpu MHz dynamic" is the current rate: not used. */
  if (key_is(key, keylen, "cpu MHz static"))
    return cpucycles_persecond_parse(value, valuelen, 1e6, out);
  /* powerpc: "clock\t\t: 2000.000000MHz"; the suffix is required. */
  if (key_is(key, keylen, "clock")) {
    while (valuelen > 0 && is_space(value[valuelen - 1])) --valuelen;
    if (valuelen < 3 || memcmp(value + valuelen - 3, "MHz", 3) != 0)
      return -1;
    return cpucycles_persecond_parse(value, valuelen - 3, 1e6, out);
  }
  return -1;
}

/* One line (without its newline).  *inprocessor records whether we are in
 * a processor's block: one with a "processor" key (x86, arm, powerpc) or a
 * "cpu number" key (s390x, whose blocks follow a summary block that also
 * ends in a blank line).  The blank line ending that first block stops the
 * scan: later blocks describe other processors and cost time to format. */
static enum cpuinfo_step cpuinfo_line(const char *line, size_t len,
                                      int *inprocessor, long long *out)
{
  const char *colon;
  size_t keylen;
  size_t i;

  for (i = 0; i < len && is_space(line[i]); ++i) {}
  if (i == len) return *inprocessor ? CPUINFO_STOP : CPUINFO_GO_ON;

  colon = memchr(line, ':', len);
  if (!colon) return CPUINFO_GO_ON;
  keylen = (size_t)(colon - line);
  while (keylen > 0 && is_blank(line[keylen - 1])) --keylen;

  if (key_is(line, keylen, "processor") || key_is(line, keylen, "cpu number"))
    *inprocessor = 1;

  i = (size_t)(colon - line) + 1;
  while (i < len && is_blank(line[i])) ++i;
  if (cpuinfo_value(line, keylen, line + i, len - i, out) == 0)
    return CPUINFO_FOUND;
  return CPUINFO_GO_ON;
}

/* Read /proc/cpuinfo line by line through a small window, stopping at the
 * first frequency found, at the end of the first processor's block, or at
 * CPUINFO_LIMIT bytes.  A line longer than the window (none of ours is) is
 * skipped whole. */
static int persecond_from_cpuinfo(const char *root, long long *out)
{
  char buf[4096];
  size_t have = 0;
  size_t total = 0;
  int skipping = 0;
  int inprocessor = 0;
  int result = -1;
  int fd = open_under(root, "/proc/cpuinfo");

  if (fd < 0) return -1;
  while (total < CPUINFO_LIMIT) {
    size_t want = sizeof buf - have;
    size_t start = 0;
    const char *newline;
    ssize_t r;
    enum cpuinfo_step step = CPUINFO_GO_ON;

    if (want > CPUINFO_LIMIT - total) want = CPUINFO_LIMIT - total;
    r = read_once(fd, buf + have, want);
    if (r < 0) break;
    have += (size_t)r;
    total += (size_t)r;

    while (step == CPUINFO_GO_ON
           && (newline = memchr(buf + start, '\n', have - start))) {
      size_t linelen = (size_t)(newline - (buf + start));
      if (skipping) skipping = 0;
      else step = cpuinfo_line(buf + start, linelen, &inprocessor, out);
      start += linelen + 1;
    }
    /* At end of file the last line may lack its newline; a line cut off
     * by CPUINFO_LIMIT is not read ("24" of "2400.000" is no value). */
    if (step == CPUINFO_GO_ON && r == 0 && !skipping && start < have)
      step = cpuinfo_line(buf + start, have - start, &inprocessor, out);
    if (step == CPUINFO_FOUND) result = 0;
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
  return result;
}

#ifdef HAVE_SYSCTLBYNAME
/* FreeBSD machdep.tsc_freq (uint64_t Hz); macOS hw.cpufrequency (int64_t
 * Hz on Intel Macs; absent on Apple silicon).  Either width is accepted. */
static int persecond_from_sysctl(const char *name, long long *out)
{
  union { uint64_t u64; uint32_t u32; } value;
  size_t len = sizeof value;
  double hz;

  if (sysctlbyname(name, &value, &len, NULL, 0) != 0) return -1;
  if (len == sizeof value.u64) hz = (double)value.u64;
  else if (len == sizeof value.u32) hz = (double)value.u32;
  else return -1;
  if (!(hz >= PERSECOND_MIN && hz <= PERSECOND_MAX)) return -1;
  *out = (long long)hz;
  return 0;
}
#endif

static int persecond_from_env(const char *envvalue, long long *out)
{
  if (!envvalue) return -1;
  return parse_integer(envvalue, strlen(envvalue), 1, out);
}

#define CPU0 "/sys/devices/system/cpu/cpu0"

long long cpucycles_persecond_estimate(const char *root, const char *envvalue)
{
  long long result;

  if (!root) root = "";
  if (persecond_from_file(root, "/etc/cpucyclespersecond", 1, &result) == 0)
    return result;
  if (persecond_from_file(root, CPU0 "/cpufreq/cpuinfo_max_freq", 1e3,
                          &result) == 0)
    return result;
  if (persecond_from_file(root, CPU0 "/cpufreq/scaling_max_freq", 1e3,
                          &result) == 0)
    return result;
  if (persecond_from_file(root, CPU0 "/tsc_freq_khz", 1e3, &result) == 0)
    return result;
  if (persecond_from_cpuinfo(root, &result) == 0)
    return result;
#ifdef HAVE_SYSCTLBYNAME
  /* sysctl cannot be redirected under a fixture root: real system only. */
  if (!*root) {
    if (persecond_from_sysctl("hw.cpufrequency", &result) == 0)
      return result;
    if (persecond_from_sysctl("machdep.tsc_freq", &result) == 0)
      return result;
  }
#endif
  if (persecond_from_env(envvalue, &result) == 0)
    return result;
  return CPUCYCLES_PERSECOND_DEFAULT;
}
