/* timebase.c: the PowerPC time-base frequency.  See timebase.h.
 *
 * Built on every host; on anything but PowerPC it compiles to nothing. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "timebase.h"

#ifdef CPUCYCLES_TIMEBASE_AVAILABLE

#include "counter.h"

#if defined(__GLIBC__) && defined(__has_include)
#if __has_include(<sys/platform/ppc.h>)
#include <sys/platform/ppc.h>
#define HAVE_PPC_GET_TIMEBASE_FREQ 1
#endif
#endif
#ifndef HAVE_PPC_GET_TIMEBASE_FREQ
#include <unistd.h>
#include "readfile.h"
#endif

#ifdef HAVE_PPC_GET_TIMEBASE_FREQ
static long long os_frequency(void)
{
  unsigned long long f = __ppc_get_timebase_freq(); /* 0: not known */
  return f > (unsigned long long) CPUCYCLES_TIMEBASE_MAX_HZ ? -1 : (long long) f;
}
#else
/* How much of /proc/cpuinfo is read, and the window it is read through,
 * on the first call's stack, which may be a small thread's. */
#define CPUINFO_BYTES 8191
#define CPUINFO_WINDOW 128

/* Where the scan for "timebase<spaces or tabs>: <digits>\n" stands. */
enum timebase_scan { IN_KEY, BEFORE_COLON, AFTER_COLON, IN_DIGITS, OTHER_LINE, DECIDED };

/* The value of the first line "timebase<spaces or tabs>: <digits>\n" of
 * the first CPUINFO_BYTES of /proc/cpuinfo; 0 when there is no such line
 * (or no file), -1 when its value is not plain digits or too large.  The
 * lines are scanned a byte at a time as they are read, so that no line
 * needs to fit the window. */
static long long os_frequency(void)
{
  static const char key[] = "timebase";
  char buf[CPUINFO_WINDOW];
  enum timebase_scan state = IN_KEY;
  size_t k = 0, total = 0;
  long long f = 0, result = 0;
  int nul_after_digits = 0; /* a NUL ended the digits: decided by the length */
  int fd = cpucycles_open_under("", "/proc/cpuinfo");

  if (fd < 0) return 0; /* no file: no rate known */
  while (total < CPUINFO_BYTES) {
    size_t want = CPUINFO_BYTES - total, i;
    ssize_t n;
    if (want > sizeof buf) want = sizeof buf;
    n = cpucycles_read_retrying(fd, buf, want);
    /* An error part way (a read failing, EINTR included) is no value: a
     * number cut short would read as a smaller one. */
    if (n < 0) { close(fd); return 0; }
    if (n == 0) break;
    total += (size_t) n;
    for (i = 0; i < (size_t) n && state != DECIDED; i++) {
      char c = buf[i];
      switch (state) {
      case IN_KEY:
        if (key[k] && c == key[k]) { k++; break; }
        if (!key[k] && (c == ' ' || c == '\t')) { state = BEFORE_COLON; break; }
        if (!key[k] && c == ':') { state = AFTER_COLON; break; }
        state = c == '\n' ? IN_KEY : OTHER_LINE;
        k = 0;
        break;
      case BEFORE_COLON:
        if (c == ' ' || c == '\t') break;
        if (c == ':') { state = AFTER_COLON; break; }
        state = c == '\n' ? IN_KEY : OTHER_LINE;
        k = 0;
        break;
      case AFTER_COLON:
        if (c == ' ' || c == '\t') break;
        if (c < '0' || c > '9') { result = -1; state = DECIDED; break; }
        f = c - '0';
        state = IN_DIGITS;
        break;
      case IN_DIGITS:
        if (c >= '0' && c <= '9') {
          f = f * 10 + (c - '0');
          if (f > CPUCYCLES_TIMEBASE_MAX_HZ) { result = -1; state = DECIDED; }
          break;
        }
        /* the end of the text ends the number only at the end of the file */
        if (c == 0) nul_after_digits = 1;
        result = c == '\n' || c == 0 ? f : -1;
        state = DECIDED;
        break;
      case OTHER_LINE:
        if (c == '\n') { state = IN_KEY; k = 0; }
        break;
      case DECIDED:
        break;
      }
    }
  }
  close(fd);
  /* As though the text read were followed by a NUL: a number there ends
   * only where the file did (fewer than CPUINFO_BYTES bytes). */
  if (state == AFTER_COLON) return -1;
  if (state == IN_DIGITS || nul_after_digits)
    return total < CPUINFO_BYTES ? f : -1;
  return state == DECIDED ? result : 0;
}
#endif

long long cpucycles_timebase_frequency(void)
{
  long long f = os_frequency();
  if (f == 0) return 0;
  if (f < CPUCYCLES_TIMEBASE_MIN_HZ || f > CPUCYCLES_TIMEBASE_MAX_HZ) return -1;
  return f;
}

int cpucycles_timebase_info(struct counter_info *info)
{
  long long f = cpucycles_timebase_frequency();
  if (f < 0) return -1;
  info->kind = COUNTER_OFFCORE;
  info->frequency = f;
  info->rate_unknown = f == 0;
  info->only32 = 0;
  return 0;
}

#else

/* ISO C wants something in every translation unit. */
typedef int cpucycles_timebase_unavailable;

#endif
