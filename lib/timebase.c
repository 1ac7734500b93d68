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
#include "readfile.h"
#endif

#ifdef HAVE_PPC_GET_TIMEBASE_FREQ
static long long os_frequency(void)
{
  unsigned long long f = __ppc_get_timebase_freq(); /* 0: not known */
  return f > (unsigned long long) CPUCYCLES_TIMEBASE_MAX_HZ ? -1 : (long long) f;
}
#else
/* The value of the first line "timebase<spaces or tabs>: <digits>\n" of
 * /proc/cpuinfo; 0 when there is no such line (or no file), -1 when its
 * value is not plain digits or too large. */
static long long os_frequency(void)
{
  static const char key[] = "timebase";
  char buf[8192];
  size_t len, i;
  int full;
  /* An error part way (a read failing, EINTR included) is no value: a
   * number cut short would read as a smaller one. */
  ssize_t n = cpucycles_read_file_start("", "/proc/cpuinfo", buf, sizeof buf - 1, &full);
  if (n < 0) return 0; /* no file (or it failed): no rate known */
  len = (size_t) n;
  buf[len] = 0;
  for (i = 0; i < len; i++) {
    long long f = 0;
    size_t j = i, k;
    if (i > 0 && buf[i - 1] != '\n') continue;
    for (k = 0; key[k] && buf[j] == key[k]; k++, j++) continue;
    if (key[k]) continue;
    while (buf[j] == ' ' || buf[j] == '\t') j++;
    if (buf[j++] != ':') continue;
    while (buf[j] == ' ' || buf[j] == '\t') j++;
    if (buf[j] < '0' || buf[j] > '9') return -1;
    for (; buf[j] >= '0' && buf[j] <= '9'; j++) {
      f = f * 10 + (buf[j] - '0');
      if (f > CPUCYCLES_TIMEBASE_MAX_HZ) return -1;
    }
    /* the end of the text ends the number only at the end of the file */
    if (buf[j] != '\n' && (buf[j] != 0 || full)) return -1;
    return f;
  }
  return 0;
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
