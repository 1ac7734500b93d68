/* stand-in.h: what the perf benches read instead of a PMU.
 * The hardware counter read is rdtsc (x86) or a plain memory load
 * (elsewhere), and an event is a memfd whose first page says "on
 * hardware counter 0, user reads allowed, 64 bits", opened through
 * the opener seam (tests/seams.h); or, where a read(2) is measured, a
 * real per-thread software event (task clock). */
#ifndef CPUCYCLES_BENCH_STAND_IN_H
#define CPUCYCLES_BENCH_STAND_IN_H

#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../tests/seams.h"

#ifdef CPUCYCLES_PERF_AVAILABLE

#if defined(__x86_64__) || defined(__i386__)
#define INSTRUCTION "rdtsc"
static inline unsigned long long instruction(unsigned int counter)
{
  unsigned int lo, hi;
  (void) counter;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return (unsigned long long) hi << 32 | lo;
}
#else
#define INSTRUCTION "a volatile load"
static volatile unsigned long long ticking;
static inline unsigned long long instruction(unsigned int counter)
{
  (void) counter;
  return ticking++;
}
#endif

static inline int memfd_event(struct perf_event_attr *attr, pid_t pid, int cpu,
                              int group_fd, unsigned long flags)
{
  struct perf_event_mmap_page pg;
  int fd;
  (void) attr; (void) pid; (void) cpu; (void) group_fd; (void) flags;
  fd = memfd_create("bench-perf-event", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, sysconf(_SC_PAGESIZE)) != 0) return -1;
  memset(&pg, 0, sizeof pg);
  pg.lock = 2;
  pg.index = 1;
  pg.cap_user_rdpmc = 1;
  pg.pmc_width = 64;
  if (pwrite(fd, &pg, sizeof pg, 0) != (ssize_t) sizeof pg) return -1;
  return fd;
}

/* A real per-thread software event (task clock) in place of cycles: an
 * opener, and what the benches open themselves. */
static inline int task_clock_event(struct perf_event_attr *attr, pid_t pid,
                                   int cpu, int group_fd, unsigned long flags)
{
  struct perf_event_attr sw = *attr;
  sw.type = PERF_TYPE_SOFTWARE;
  sw.config = PERF_COUNT_SW_TASK_CLOCK;
  return (int) syscall(__NR_perf_event_open, &sw, pid, cpu, group_fd, flags);
}

#endif

#endif
