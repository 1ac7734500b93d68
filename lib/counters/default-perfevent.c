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

static __thread struct cpucycles_perf_event event
  __attribute__((tls_model("initial-exec")));

static long long perfevent_slow(void)
{
  long long count;

  if (event.state == CPUCYCLES_PERF_UNOPENED &&
      cpucycles_perf_open(&event, 0) != 0)
    event.state = CPUCYCLES_PERF_FALLBACK;
  if (event.state == CPUCYCLES_PERF_OPEN) {
    if (cpucycles_perf_read_fd(event.fd, &count) == 0) return count;
    /* A perf descriptor that stops answering: from now on this thread
     * reads the clock, so that its values stay in one unit. */
    cpucycles_perf_close(&event);
    event.state = CPUCYCLES_PERF_FALLBACK;
  }
  return cpucycles_perf_fallback();
}

static long long perfevent_read(void)
{
  long long count;

  if (__builtin_expect(event.state == CPUCYCLES_PERF_OPEN, 1) &&
      cpucycles_perf_read_fd(event.fd, &count) == 0)
    return count;
  return perfevent_slow();
}

static int perfevent_setup(struct counter_info *info)
{
  long long count;

  if (cpucycles_perf_open(&event, 0) != 0) return -1;
  if (cpucycles_perf_read_fd(event.fd, &count) != 0) {
    cpucycles_perf_close(&event);
    return -1;
  }
  info->kind = COUNTER_PERFEVENT;
  info->frequency = 0;
  info->only32 = 0;
  return 0;
}

static void perfevent_release(void)
{
  cpucycles_perf_close(&event);
}

static void perfevent_atfork_child(void)
{
  cpucycles_perf_atfork_child(&event);
}

const struct counter cpucycles_counter_default_perfevent = {
  "default-perfevent", perfevent_read, perfevent_setup, perfevent_release,
  perfevent_atfork_child
};
