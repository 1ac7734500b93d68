/* default-perfevent: the calling thread's user-mode cycles from its own
 * perf event, read with read(2): a system call per read, hence the probe's
 * penalty.  Threads, fork, refusals: lib/perf.h, doc/perf-counters.md. */
#if !defined(__linux__)
#error "default-perfevent needs Linux perf_event"
#endif

#include "perf.h" /* first: config.h, _GNU_SOURCE, <linux/perf_event.h> */

#ifndef CPUCYCLES_PERF_AVAILABLE
#error "default-perfevent needs lib/perf.c's perf_event support"
#endif

#include <sys/syscall.h>
#if !defined(__NR_perf_event_open)
#error "default-perfevent needs the perf_event_open system call"
#endif

#include "counter.h"

static long long perfevent_read(void)
{
  return cpucycles_perf_read(&cpucycles_perf_thread_event, 0, 0);
}

static int perfevent_setup(struct counter_info *info)
{
  return cpucycles_perf_counter_setup(0, 0, info);
}

const struct counter cpucycles_counter_default_perfevent = {
  "default-perfevent", perfevent_read, perfevent_setup,
  cpucycles_perf_counter_release, cpucycles_perf_counter_atfork_child,
  COUNTER_ASKS
};
