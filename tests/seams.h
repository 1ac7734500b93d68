/* seams.h: what the tests (and the benches) change in the library's view
 * of the system.  tests/seams.c defines what lib/libcpucycles-sys.la does
 * (lib/perf-sys.c: the perf code's table of operations; lib/multiplier-sys.c:
 * the multiplier's clock), dispatching to what is set here; a program or
 * module that links it must not link lib/libcpucycles-sys.la.  Not
 * thread-safe: set before the library is used. */
#ifndef CPUCYCLES_TEST_SEAMS_H
#define CPUCYCLES_TEST_SEAMS_H

#include "perf.h"

/* The clock the multiplier measurement reads, in microseconds (0: the
 * library's, cpucycles_clock_usec). */
void cpucycles_multiplier_set_clock(long long (*clock_usec)(void));

#ifdef CPUCYCLES_PERF_AVAILABLE

typedef int (*cpucycles_perf_open_fn)(struct perf_event_attr *attr, pid_t pid,
                                      int cpu, int group_fd,
                                      unsigned long flags);
typedef int (*cpucycles_perf_ioctl_fn)(int fd, unsigned long request, void *arg);
typedef int (*cpucycles_perf_clock_fn)(clockid_t clock, struct timespec *t);

/* perf_event_open(2) (0: the real one again). */
void cpucycles_perf_set_opener(cpucycles_perf_open_fn open_fn);

/* ioctl(2) on an event (0: the real one again). */
void cpucycles_perf_set_ioctl(cpucycles_perf_ioctl_fn ioctl_fn);

/* The clock cpucycles_perf_fallback() reads (0: the real one again). */
void cpucycles_perf_set_clock(cpucycles_perf_clock_fn clock_fn);

/* Where the core PMUs are looked for: ROOT/sys/bus/event_source/devices
 * (0 or "": the real system); the next open looks again, also for the
 * same string. */
void cpucycles_perf_set_sysfs_root(const char *root);

#endif

#endif
