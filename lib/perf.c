/* perf.c: the perf counters' slow read path, fallback clock and setup,
 * above the registry and an event's open and close (perf.h,
 * doc/perf-counters.md). */
#include "perf.h" /* first: config.h, _GNU_SOURCE */

#ifdef CPUCYCLES_PERF_AVAILABLE

#include "counter.h"
#include "osclock.h"

#include <errno.h>
#include <limits.h>
#include <time.h>

__thread struct cpucycles_perf_event cpucycles_perf_thread_event;

/* The fallback clock's rate, and its base second, taken at its first
 * read in the process (LLONG_MIN until then): no clock is read for a
 * process that never falls back. */
static struct {
  long long persecond;
  long long base_sec;
} fallback = { 1000000000LL, LLONG_MIN };

/* read(2) of event i's count: one system call where the descriptor lives
 * high (perf-event.c); identity asked after a failed read, and before it
 * where the event stayed low or with ask (a page counter: the number may
 * hold the program's dup2()).  0 with *out; -1 when the event's read
 * fails; 1, errno EBADF, when the number is not the event's (any more). */
static int read_event(struct cpucycles_perf_event *ev, int i, long long *out,
                      int ask)
{
  int fd = *cpucycles_perf_fd_of(ev, i);
  ssize_t n;
  if (fd >= 0 && !((ask || ev->asks) && !cpucycles_perf_is_ours(ev, i))) {
    n = read(fd, out, sizeof *out);
    if (n == (ssize_t) sizeof *out) return 0;
    if (n >= 0) errno = EIO;
    if (errno != EBADF && cpucycles_perf_is_ours(ev, i)) return -1;
  }
  errno = EBADF;
  return 1;
}

void cpucycles_perf_set_persecond(long long persecond)
{
  if (persecond > 0) __atomic_store_n(&fallback.persecond, persecond, __ATOMIC_RELEASE);
}

long long cpucycles_perf_fallback(void)
{
  long long persecond = __atomic_load_n(&fallback.persecond, __ATOMIC_ACQUIRE);
  long long base = LLONG_MIN;
  unsigned long long seconds;
  struct timespec t;
  cpucycles_osclock_setup(); /* the vDSO only where RDTSC was asked */
  if (cpucycles_perf_ops.clock(CLOCK_MONOTONIC, &t) != 0) return 0;
  /* the first reader's second is every thread's base */
  __atomic_compare_exchange_n(&fallback.base_sec, &base, (long long) t.tv_sec, 0,
                              __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  if (base == LLONG_MIN) base = (long long) t.tv_sec;
  /* A time namespace offsets the clock by up to centuries: count from the
   * base second, unsigned (a wrap, not undefined behaviour). */
  seconds = (unsigned long long) t.tv_sec - (unsigned long long) base;
  return (long long) (seconds * (unsigned long long) persecond +
                      (unsigned long long) ((double) t.tv_nsec * (double) persecond / 1e9));
}

/* The sum of ev's events: 0 with *out, else read_event()'s answer for the
 * one that failed.  Off the hardware (index 0: a hybrid CPU's other core
 * types) an event's count is its page's offset. */
static int read_each(struct cpucycles_perf_event *ev,
                     cpucycles_perf_rdpmc_fn rdpmc, long long *out)
{
  unsigned long long sum = 0;
  long long count;
  int i, r;
  for (i = 0; i <= ev->more; i++) {
    const volatile struct perf_event_mmap_page *page = *cpucycles_perf_page_of(ev, i);
    if (!(rdpmc && page && cpucycles_perf_page_count(page, rdpmc, &count, 1) == 0) &&
        (r = read_event(ev, i, &count, rdpmc != 0)) != 0)
      return r;
    sum += (unsigned long long) count;
  }
  *out = (long long) sum;
  return 0;
}

/* User-mode work that a working cycles event counts. */
static void spin(void)
{
  volatile unsigned int i;
  for (i = 0; i < 1000; i++) { }
}

/* The read(2) of ev's newly opened events, which must count: some kernels
 * (AWS Graviton 3) give events stuck at 0 until disabled and enabled
 * again.  An event at 0 is read again after some work, then disabled,
 * reset, enabled and read once more.  0 with the sum in *out; -1 when a
 * read fails; 1 when the sum stays 0. */
static int read_counting(struct cpucycles_perf_event *ev, long long *out)
{
  static const unsigned long remedy[3] = {
    PERF_EVENT_IOC_DISABLE, PERF_EVENT_IOC_RESET, PERF_EVENT_IOC_ENABLE
  };
  long long count[CPUCYCLES_PMU_MAX];
  unsigned long long sum = 0;
  /* n once: every loop covers the same events, all read first */
  int i, r, round, zeros = 0, n = ev->more + 1;

  if (n < 1 || n > CPUCYCLES_PMU_MAX) return -1;
  for (i = 0; i < n; i++) {
    if (read_event(ev, i, &count[i], 0) != 0) return -1;
    if (count[i] == 0) zeros++;
  }
  for (round = 0; round < 2 && zeros > 0; round++) {
    if (round == 1) {
      for (i = 0; i < n; i++)
        if (count[i] == 0 && !cpucycles_perf_is_ours(ev, i)) return -1;
      for (r = 0; r < 3; r++)
        for (i = 0; i < n; i++)
          if (count[i] == 0)
            cpucycles_perf_ops.ioctl(*cpucycles_perf_fd_of(ev, i), remedy[r], 0);
    }
    spin();
    zeros = 0;
    for (i = 0; i < n; i++)
      if (count[i] == 0) {
        if (read_event(ev, i, &count[i], 0) != 0) return -1;
        if (count[i] == 0) zeros++;
      }
  }
  for (i = 0; i < n; i++) sum += (unsigned long long) count[i];
  *out = (long long) sum;
  return sum != 0 ? 0 : 1;
}

/* A read(2) counter's value: the count plus the base of a replaced event. */
static long long read_value(struct cpucycles_perf_event *ev, long long count)
{
  ev->last = (long long) ((unsigned long long) count + (unsigned long long) ev->base);
  return ev->last;
}

/* The thread reads the clock from now on: its values stay in one unit. */
static long long give_up(struct cpucycles_perf_event *ev)
{
  cpucycles_perf_close(ev);
  if (!ev->linked) ev->state = CPUCYCLES_PERF_FALLBACK; /* (else: closed later) */
  return cpucycles_perf_fallback();
}

/* A descriptor of ev's is no longer the event's: the program closed it and
 * may have a file at its number, never to be touched again.  The page, if
 * any, still holds the event (off the hardware: its offset); read(2) only,
 * a new event continuing from the last value.  Else the fallback clock. */
static long long lost_event(struct cpucycles_perf_event *ev,
                            cpucycles_perf_rdpmc_fn rdpmc,
                            unsigned long long config1)
{
  long long count, last;
  int i;

  for (i = 0; i <= ev->more; i++)
    if (!cpucycles_perf_is_ours(ev, i)) *cpucycles_perf_fd_of(ev, i) = -1;
  if (rdpmc) {
    if (ev->state == CPUCYCLES_PERF_OPEN
          ? cpucycles_perf_page_count(ev->page, rdpmc, &count, 1) == 0
          : read_each(ev, rdpmc, &count) == 0)
      return count;
    return give_up(ev);
  }
  last = ev->last;
  if (cpucycles_perf_open(ev, 0, config1) != 0 || read_counting(ev, &count) != 0)
    return give_up(ev);
  ev->base = (long long) ((unsigned long long) last - (unsigned long long) count);
  return read_value(ev, count);
}

long long cpucycles_perf_read(struct cpucycles_perf_event *ev,
                              cpucycles_perf_rdpmc_fn rdpmc,
                              unsigned long long config1)
{
  long long count;
  int r;

  if (cpucycles_perf_open_once(ev, rdpmc != 0, config1) && !rdpmc) {
    /* a thread's own read(2) event must count, as in setup */
    if (read_counting(ev, &count) == 0) return read_value(ev, count);
    return give_up(ev);
  }
  if (ev->kind != cpucycles_perf_kind(rdpmc != 0, config1)) /* (open_once) */
    return cpucycles_perf_fallback();
  if (ev->state == CPUCYCLES_PERF_OPEN) {
    if (rdpmc && cpucycles_perf_page_read(ev->page, rdpmc, &count) == 0)
      return count;
    r = read_event(ev, 0, &count, rdpmc != 0);
  } else if (ev->state == CPUCYCLES_PERF_OPEN_EACH_PMU) {
    r = read_each(ev, rdpmc, &count);
  } else {
    return cpucycles_perf_fallback();
  }
  if (r == 0) return rdpmc ? count : read_value(ev, count);
  if (r > 0) return lost_event(ev, rdpmc, config1);
  return give_up(ev); /* a descriptor of ours stopped answering */
}

int cpucycles_perf_refuse(struct cpucycles_perf_event *ev, struct counter_info *info,
                          const char *why, int err)
{
  cpucycles_perf_close(ev);
  return counter_refuse(info, why, err);
}

int cpucycles_perf_setup(struct cpucycles_perf_event *ev,
                         cpucycles_perf_rdpmc_fn rdpmc,
                         unsigned long long config1,
                         struct counter_info *info)
{
  long long count;
  int i, r;

  if (cpucycles_perf_open(ev, rdpmc != 0, config1) != 0) {
    if (errno == ENOSPC && cpucycles_perf_core_pmus(0, 0) > CPUCYCLES_PMU_MAX)
      return counter_refuse(info, CPUCYCLES_PERF_REFUSAL_PMUS, 0);
    return counter_refuse(info, CPUCYCLES_REFUSAL_PERF_OPEN, errno);
  }
  if (rdpmc) {
    /* Without user reads (the rdpmc switch or perf_user_access 0, a
     * hypervisor) every read would be a read(2): default-perfevent's. */
    for (i = 0; i <= ev->more; i++)
      if (!(*cpucycles_perf_page_of(ev, i))->cap_user_rdpmc)
        return cpucycles_perf_refuse(ev, info, CPUCYCLES_REFUSAL_NO_USER_RDPMC, 0);
    /* The instruction is not run here, where nothing would catch its
     * fault: the probe tries the reads caught (may_fault).  An event off
     * the hardware (index 0) must answer read(2), which its reads use. */
    if (ev->state == CPUCYCLES_PERF_OPEN && ev->page->index == 0 &&
        read_event(ev, 0, &count, 1) != 0)
      return cpucycles_perf_refuse(ev, info, CPUCYCLES_REFUSAL_PERF_READ, errno);
    info->may_fault = 1;
  } else if ((r = read_counting(ev, &count)) != 0) {
    return r > 0 ? cpucycles_perf_refuse(ev, info, CPUCYCLES_PERF_REFUSAL_STUCK, 0)
                 : cpucycles_perf_refuse(ev, info, CPUCYCLES_REFUSAL_PERF_READ, errno);
  }
  return counter_accept(info, rdpmc ? COUNTER_ONCORE : COUNTER_PERFEVENT, 0, 0);
}

int cpucycles_perf_counter_setup(cpucycles_perf_rdpmc_fn rdpmc,
                                 unsigned long long config1,
                                 struct counter_info *info)
{
  if (cpucycles_perf_can_open(info, config1) != 0) return -1;
  return cpucycles_perf_setup(&cpucycles_perf_thread_event, rdpmc, config1, info);
}

void cpucycles_perf_counter_release(void)
{
  /* (no event ever opened: the thread-local left untouched) */
  if (cpucycles_perf_ever_linked()) cpucycles_perf_close(&cpucycles_perf_thread_event);
}

void cpucycles_perf_counter_atfork_child(void)
{
  cpucycles_perf_atfork_child(&cpucycles_perf_thread_event);
}

#else

/* ISO C wants something in every translation unit. */
typedef int cpucycles_perf_unavailable;

#endif
