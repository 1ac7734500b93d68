/* The PowerPC time-base frequency (timebase.h); empty on other hosts. */
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

#ifdef HAVE_PPC_GET_TIMEBASE_FREQ
static long long os_frequency(void)
{
  unsigned long long f = __ppc_get_timebase_freq(); /* 0: not known */
  return f > (unsigned long long) CPUCYCLES_TIMEBASE_MAX_HZ ? -1 : (long long) f;
}
#else
#include <string.h>
#include "readfile.h"

/* Through a window on the first call's stack (doc/security.md). */
#define CPUINFO_BYTES 8191
#define CPUINFO_WINDOW 128

/* The first "timebase<blanks>:<blanks><digits>" decides (*arg: its value,
 * or -1 when it is not plain digits or too large). */
static int timebase_line(const char *line, size_t len, void *arg)
{
  long long *f = arg;
  size_t i = sizeof "timebase" - 1;
  if (len < i || memcmp(line, "timebase", i) != 0) return 0;
  while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
  if (i == len || line[i++] != ':') return 0;
  while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
  *f = i == len ? -1 : 0;
  for (; i < len && *f >= 0; i++) {
    if (line[i] < '0' || line[i] > '9') *f = -1;
    else *f = *f * 10 + (line[i] - '0');
    if (*f > CPUCYCLES_TIMEBASE_MAX_HZ) *f = -1;
  }
  return 1;
}

/* 0 when there is no timebase line, no file, or a read failed part way
 * (a number cut short would read as a smaller one). */
static long long os_frequency(void)
{
  char buf[CPUINFO_WINDOW];
  long long f = 0;
  if (cpucycles_read_lines("", "/proc/cpuinfo", CPUINFO_BYTES, buf,
                           sizeof buf, timebase_line, &f) != 0)
    return 0;
  return f;
}
#endif

int cpucycles_timebase_setup(struct counter_info *info)
{
  long long f = os_frequency();
  if (f != 0 && (f < CPUCYCLES_TIMEBASE_MIN_HZ || f > CPUCYCLES_TIMEBASE_MAX_HZ))
    return counter_refuse(info, "the OS states an implausible time-base frequency", 0);
  info->rate_unknown = f == 0;
  return counter_accept(info, COUNTER_OFFCORE, f, 0);
}

#else

/* ISO C wants something in every translation unit. */
typedef int cpucycles_timebase_unavailable;

#endif
