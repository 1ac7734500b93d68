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

static __thread struct cpucycles_perf_event event;

static long long perfevent_read(void)
{
  return cpucycles_perf_read(&event, 0, 0);
}

static int perfevent_setup(struct counter_info *info)
{
  if (cpucycles_perf_can_open(info, 0) != 0) return -1;
  return cpucycles_perf_setup(&event, 0, 0, info);
}

static void perfevent_release(void) { if (cpucycles_perf_ever_linked()) cpucycles_perf_close(&event); }
static void perfevent_atfork_child(void) { cpucycles_perf_atfork_child(&event); }

const struct counter cpucycles_counter_default_perfevent = {
  "default-perfevent", perfevent_read, perfevent_setup, perfevent_release,
  perfevent_atfork_child, COUNTER_ASKS
};
