/* A client for tests/syscalls.sh, which runs it under strace and compares
 * the system calls the library made with doc/security.md's list.  Each
 * phase is marked by a write(2) to descriptor -1 (it fails with EBADF and
 * shows in strace's log with its text): the first call, 1000 reads, and
 * in a second thread its first read and 1000 more.
 *
 * Built a second time with the seams (tests/syscall-standin-client, with
 * STAND_IN defined), it gives the perf code real software events (task
 * clock) in place of cycles events, so that default-perfevent's calls are
 * seen on a machine without a PMU: "stand-in" opens them counting,
 * "stand-in-zero" opens them disabled, so that their count stays at 0
 * until the library's remedy (disable, reset, enable) enables them, and
 * "stand-in-einval" has the kernel refuse the second thread's opens. */
#if defined(STAND_IN) && defined(__linux__)
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include "cpucycles.h"
#include "checked-by.h"
#if defined(STAND_IN) && defined(__linux__)
#include "../bench/stand-in.h"

#ifdef CPUCYCLES_PERF_AVAILABLE
static int disabled_task_clock_event(struct perf_event_attr *attr, pid_t pid,
                                     int cpu, int group_fd, unsigned long flags)
{
  struct perf_event_attr off = *attr;
  off.disabled = 1;
  return task_clock_event(&off, pid, cpu, group_fd, flags);
}

/* Once set (after the first thread's reads), every open is refused by the
 * kernel with EINVAL (a reserved field set), as a PMU that cannot
 * exclude what is asked refuses it. */
static int refuse_all;
static int refusing_task_clock_event(struct perf_event_attr *attr, pid_t pid,
                                     int cpu, int group_fd, unsigned long flags)
{
  struct perf_event_attr bad = *attr;
  if (refuse_all) bad.__reserved_1 = 1;
  return task_clock_event(&bad, pid, cpu, group_fd, flags);
}
#endif
#endif

static void mark(const char *phase)
{
  if (write(-1, phase, strlen(phase)) < 0) {}
}

static long long reads(void)
{
  long long sum = 0;
  int i;
  for (i = 0; i < 1000; i++) sum += cpucycles();
  return sum;
}

static void *thread_reads(void *unused)
{
  long long sum;
  (void) unused;
  mark("syscalls: thread first read");
  sum = cpucycles();
  mark("syscalls: thread reads");
  sum += reads();
  mark("syscalls: thread end");
  return (void *) (long) (sum & 1);
}

int main(int argc, char **argv)
{
  pthread_t t;
  const char *name;

  /* A sanitizer's runtime makes system calls of its own inside the
   * library's (and LeakSanitizer refuses to run under strace). */
  if (argc > 1 && strcmp(argv[1], "checked-by") == 0) {
#ifdef UNDER_SANITIZER
    return write(1, "sanitizer\n", 10) == 10 ? 0 : 2;
#else
    return write(1, "nothing\n", 8) == 8 ? 0 : 2;
#endif
  }
  if (argc > 1 && strcmp(argv[1], "trace") == 0) cpucycles_tracesetup();
#ifdef STAND_IN
#ifdef CPUCYCLES_PERF_AVAILABLE
  if (argc > 1 && strcmp(argv[1], "stand-in") == 0)
    cpucycles_perf_set_opener(task_clock_event);
  else if (argc > 1 && strcmp(argv[1], "stand-in-zero") == 0)
    cpucycles_perf_set_opener(disabled_task_clock_event);
  else if (argc > 1 && strcmp(argv[1], "stand-in-einval") == 0)
    cpucycles_perf_set_opener(refusing_task_clock_event);
  else
#endif
    return write(1, "no stand-in\n", 12) == 12 ? 77 : 2;
#endif
  mark("syscalls: first call");
  cpucycles();
  mark("syscalls: reads");
  reads();
  mark("syscalls: end");
#if defined(STAND_IN) && defined(CPUCYCLES_PERF_AVAILABLE)
  refuse_all = 1;
#endif
  if (pthread_create(&t, 0, thread_reads, 0) != 0) return 2;
  pthread_join(t, 0);
  name = cpucycles_implementation();
  if (write(1, name, strlen(name)) < 0 || write(1, "\n", 1) < 0) return 2;
  return 0;
}
