/* ppc64-mftb: the 64-bit time base of a 64-bit PowerPC CPU, read with
 * one mftb.  The time base ticks at a constant
 * rate beside the core (512 MHz on POWER8 and later, tens of MHz on older
 * and embedded parts), so it is an off-core counter, scaled by the CPU
 * frequency estimate over the time-base frequency.
 *
 * The time-base frequency is the OS's to tell: glibc's
 * __ppc_get_timebase_freq() asks the vDSO (__kernel_get_tbfreq) or reads the
 * "timebase" line of /proc/cpuinfo; without glibc, setup reads that line
 * itself (open/read into a stack buffer, strict decimal parse).  Either way
 * the value is believed only between 1 MHz and 10 GHz.  mftb is
 * unprivileged on every PowerPC. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#if !defined(__powerpc64__)
#error "ppc64-mftb needs a 64-bit PowerPC CPU"
#endif

#include "counter.h"

#if defined(__GLIBC__) && defined(__has_include)
#if __has_include(<sys/platform/ppc.h>)
#include <sys/platform/ppc.h>
#define HAVE_PPC_GET_TIMEBASE_FREQ 1
#endif
#endif
#ifndef HAVE_PPC_GET_TIMEBASE_FREQ
#include <fcntl.h>
#include <unistd.h>
#endif

#define TIMEBASE_MIN_HZ 1000000LL
#define TIMEBASE_MAX_HZ 10000000000LL

static long long mftb_read(void)
{
  long long r;
  __asm__ __volatile__("mftb %0" : "=r"(r));
  return r;
}

#ifdef HAVE_PPC_GET_TIMEBASE_FREQ
static long long timebase_frequency(void)
{
  unsigned long long f = __ppc_get_timebase_freq();
  return f > (unsigned long long) TIMEBASE_MAX_HZ ? -1 : (long long) f;
}
#else
/* The value of the first line "timebase<spaces or tabs>: <digits>\n" of
 * /proc/cpuinfo, or -1. */
static long long timebase_frequency(void)
{
  static const char key[] = "timebase";
  char buf[8192];
  size_t len = 0;
  ssize_t n;
  size_t i;
  int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  while (len < sizeof buf - 1 && (n = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
    len += (size_t) n;
  close(fd);
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
      if (f > TIMEBASE_MAX_HZ) return -1;
    }
    if (buf[j] != '\n' && buf[j] != 0) return -1;
    return f;
  }
  return -1;
}
#endif

static int mftb_setup(struct counter_info *info)
{
  long long f = timebase_frequency();
  if (f < TIMEBASE_MIN_HZ || f > TIMEBASE_MAX_HZ) return -1;
  mftb_read();
  info->kind = COUNTER_OFFCORE;
  info->frequency = f;
  info->only32 = 0;
  return 0;
}

const struct counter cpucycles_counter_ppc64_mftb = {
  "ppc64-mftb", mftb_read, mftb_setup, 0, 0
};
