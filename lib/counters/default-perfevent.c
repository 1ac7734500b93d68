/* default-perfevent: the calling thread's CPU cycles as counted by a Linux
 * perf_event (PERF_COUNT_HW_CPU_CYCLES, user mode only), read with read(2)
 * on its descriptor: a system call per read, hence the probe's penalty.
 *
 * The event counts the thread that opened it, so each thread opens its own
 * on its first read; see lib/perf.h and doc/perf-counters.md for thread
 * exit, fork, and what a thread gets when the kernel refuses it an event. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#if !defined(__linux__)
#error "default-perfevent needs Linux perf_event"
#endif

#include <linux/perf_event.h>
#include <sys/syscall.h>

#if !defined(__NR_perf_event_open)
#error "default-perfevent needs the perf_event_open system call"
#endif

#include "counter.h"
#include "perf.h"

#ifndef CPUCYCLES_PERF_AVAILABLE
#error "default-perfevent needs lib/perf.c's perf_event support"
#endif

static __thread struct cpucycles_perf_event event;

/* No page, no instruction: lib/perf.c's read (rdpmc 0) opens the
 * thread's event on its first read and read(2)s it; a descriptor that
 * stops answering leaves the thread on the clock, in one unit. */
static long long perfevent_read(void)
{
  return cpucycles_perf_read(&event, 0, 0);
}

static int perfevent_setup(struct counter_info *info)
{
  return cpucycles_perf_setup(&event, 0, 0, info);
}

static void perfevent_release(void) { cpucycles_perf_close(&event); }
static void perfevent_atfork_child(void) { cpucycles_perf_atfork_child(&event); }

const struct counter cpucycles_counter_default_perfevent = {
  "default-perfevent", perfevent_read, perfevent_setup, perfevent_release,
  perfevent_atfork_child, COUNTER_ASKS
};
