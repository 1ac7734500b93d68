/* seams.c: the library's view of the system for test builds (seams.h),
 * linked in place of lib/libcpucycles-sys.la. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "seams.h"

#include "adapters.h"
#include "multiplier.h"

static long long (*multiplier_clock)(void) = cpucycles_clock_usec;

void cpucycles_multiplier_set_clock(long long (*clock_usec)(void))
{
  multiplier_clock = clock_usec ? clock_usec : cpucycles_clock_usec;
}

static long long seam_multiplier_clock(void)
{
  return multiplier_clock();
}

long long (*const cpucycles_multiplier_clock)(void) = seam_multiplier_clock;

#ifdef CPUCYCLES_PERF_AVAILABLE

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "osclock.h"

static int real_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                     int group_fd, unsigned long flags)
{
#ifdef __NR_perf_event_open
  return (int) syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
#else
  (void) attr; (void) pid; (void) cpu; (void) group_fd; (void) flags;
  errno = ENOSYS;
  return -1;
#endif
}

static int real_ioctl(int fd, unsigned long request, void *arg)
{
  return ioctl(fd, request, arg);
}

static cpucycles_perf_open_fn opener = real_open;
static cpucycles_perf_ioctl_fn ioctler = real_ioctl;
static cpucycles_perf_clock_fn clocker = cpucycles_osclock_gettime;
/* Two buffers, used in turn, so that every set_sysfs_root() hands the
 * perf code a new pointer: it looks for the PMUs again. */
static char roots[2][4096];
static const char *root = "";
static int next_root;

void cpucycles_perf_set_opener(cpucycles_perf_open_fn open_fn)
{
  opener = open_fn ? open_fn : real_open;
}

void cpucycles_perf_set_ioctl(cpucycles_perf_ioctl_fn ioctl_fn)
{
  ioctler = ioctl_fn ? ioctl_fn : real_ioctl;
}

void cpucycles_perf_set_clock(cpucycles_perf_clock_fn clock_fn)
{
  clocker = clock_fn ? clock_fn : cpucycles_osclock_gettime;
}

void cpucycles_perf_set_sysfs_root(const char *r)
{
  char *buf = roots[next_root];
  next_root ^= 1;
  if (!r) r = "";
  strncpy(buf, r, sizeof roots[0] - 1);
  buf[sizeof roots[0] - 1] = 0;
  root = buf;
}

static int seam_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                     int group_fd, unsigned long flags)
{
  return opener(attr, pid, cpu, group_fd, flags);
}

static int seam_ioctl(int fd, unsigned long request, void *arg)
{
  return ioctler(fd, request, arg);
}

static int seam_clock(clockid_t clock, struct timespec *t)
{
  return clocker(clock, t);
}

static const char *seam_root(void)
{
  return root;
}

const struct cpucycles_perf_ops cpucycles_perf_ops = {
  seam_open, seam_ioctl, seam_clock, seam_root
};

#else

typedef int cpucycles_perf_seams_unavailable;

#endif
