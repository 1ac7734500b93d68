/* perf-sys.c: the perf code's system calls (perf-event.h, struct
 * cpucycles_perf_ops) and nothing else: test builds link tests/seams.c in
 * its place, so the shipped library holds no writable seam. */
#include "perf-event.h" /* first: config.h, _GNU_SOURCE */

#ifdef CPUCYCLES_PERF_AVAILABLE

#include <errno.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "osclock.h"

static int perf_event_open_syscall(struct perf_event_attr *attr, pid_t pid,
                                   int cpu, int group_fd, unsigned long flags)
{
#ifdef __NR_perf_event_open
  return (int) syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
#else
  (void) attr; (void) pid; (void) cpu; (void) group_fd; (void) flags;
  errno = ENOSYS;
  return -1;
#endif
}

static int ioctl_syscall(int fd, unsigned long request, void *arg)
{
  return ioctl(fd, request, arg);
}

static const char *real_root(void)
{
  return "";
}

const struct cpucycles_perf_ops cpucycles_perf_ops = {
  perf_event_open_syscall, ioctl_syscall, cpucycles_osclock_gettime, real_root
};

#else

typedef int cpucycles_perf_sys_unavailable;

#endif
