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
 * read in the process (LLONG_MIN until then). */
static struct {
  long long persecond;
  long long base_sec;
} fallback = { 1000000000LL, LLONG_MIN };

/* read(2) of event i's count, once the descriptor has said it is still
 * the event's (perf-event.c): a number the program closed and reused is
 * never read, so none of its data is taken and no read of it blocks.  0
 * with *out; -1 when the event's read fails; 1, errno EBADF, when the
 * number is not the event's (any more). */
static int read_event(struct cpucycles_perf_event *ev, int i, long long *out)
{
  int fd = *cpucycles_perf_fd_of(ev, i);
  ssize_t n;
  if (fd >= 0 && cpucycles_perf_is_ours(ev, i)) {
    n = read(fd, out, sizeof *out);
    if (n == (ssize_t) sizeof *out) return 0;
    if (n >= 0) errno = EIO;
    if (errno != EBADF) return -1;
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
  long long base = __atomic_load_n(&fallback.base_sec, __ATOMIC_RELAXED);
  unsigned long long seconds;
  struct timespec t;
  cpucycles_osclock_setup(); /* the vDSO only where RDTSC was asked */
  if (cpucycles_perf_ops.clock(CLOCK_MONOTONIC, &t) != 0) return 0;
  /* the first reader's second is every thread's base */
  if (base == LLONG_MIN &&
      __atomic_compare_exchange_n(&fallback.base_sec, &base, (long long) t.tv_sec, 0,
                                  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    base = (long long) t.tv_sec;
  /* A time namespace offsets the clock by up to centuries: count from the
   * base second, unsigned (a wrap, not undefined behaviour). */
  seconds = (unsigned long long) t.tv_sec - (unsigned long long) base;
  return (long long) (seconds * (unsigned long long) persecond +
                      (unsigned long long) ((double) t.tv_nsec * (double) persecond / 1e9));
}

/* a + b and a - b on values from outside: a wrap, never an overflow */
static long long plus(long long a, long long b)
{
  return (long long) ((unsigned long long) a + (unsigned long long) b);
}

static long long minus(long long a, long long b)
{
  return (long long) ((unsigned long long) a - (unsigned long long) b);
}

/* The thread's value for the count its event(s) gave: count + base, never
 * below the last (doc/perf-counters.md, "When the kernel moves or stops
 * the event").  Unless a page said the event is on a counter now (live),
 * the fallback clock is read, and where the count has not moved since the
 * last read through here (off every counter, disabled, starved), the
 * clock's cycles since then join the base; one that went back, the gap. */
static long long value_of(struct cpucycles_perf_event *ev, long long count, int live)
{
  long long now;
  if (count < ev->seen) ev->base = plus(ev->base, minus(ev->seen, count));
  if (!live) {
    now = cpucycles_perf_fallback();
    if (ev->timed && count <= ev->seen) ev->base = plus(ev->base, minus(now, ev->seen_at));
    ev->seen_at = now;
  }
  ev->timed = !live;
  ev->seen = count;
  return plus(count, ev->base);
}

/* The sum of ev's events: 0 with *out and *live (some page said its event
 * is on a counter), else read_event()'s answer for the one that failed.
 * Off every counter (index 0: a hybrid CPU's other core types, a lost
 * descriptor's event) an event's count is its page's offset. */
static int read_each(struct cpucycles_perf_event *ev,
                     cpucycles_perf_rdpmc_fn rdpmc, long long *out, int *live)
{
  unsigned long long sum = 0;
  long long count;
  int i, r;
  *live = 0;
  for (i = 0; i <= ev->more; i++) {
    const volatile struct perf_event_mmap_page *page = *cpucycles_perf_page_of(ev, i);
    r = rdpmc && page ? cpucycles_perf_page_count(page, rdpmc, &count, 1, 0) : -1;
    if (r == 0) *live = 1;
    if (r < 0 && (r = read_event(ev, i, &count)) != 0) return r;
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
  unsigned long long sum = 0;
  long long count;
  int i, r, round;

  for (i = 0; i <= ev->more; i++) {
    for (count = 0, round = 0; round < 3 && count == 0; round++) {
      if (round == 2) { /* (the ioctls write: the identity asked first) */
        if (!cpucycles_perf_is_ours(ev, i)) return -1;
        for (r = 0; r < 3; r++)
          cpucycles_perf_ops.ioctl(*cpucycles_perf_fd_of(ev, i), remedy[r], 0);
      }
      if (round > 0) spin();
      if (read_event(ev, i, &count) != 0) return -1;
    }
    sum += (unsigned long long) count;
  }
  *out = (long long) sum;
  return sum != 0 ? 0 : 1;
}

/* The thread reads the fallback clock from now on, in the same unit and
 * never below its last value: plus the difference where that was ahead. */
static long long give_up(struct cpucycles_perf_event *ev, long long last)
{
  long long now, base;
  cpucycles_perf_close(ev);
  now = cpucycles_perf_fallback();
  base = last > now ? minus(last, now) : 0;
  if (!ev->linked) { /* (else: closed later) */
    ev->state = CPUCYCLES_PERF_FALLBACK;
    ev->base = base;
  }
  return plus(now, base);
}

/* A descriptor of ev's is no longer the event's (the program closed it and
 * may have a file at its number, never to be touched again), or its read
 * failed.  The page, if any, still holds the event (off the hardware: its
 * offset); read(2) only, a new event continuing from the last value.
 * Else the fallback clock. */
static long long lost_event(struct cpucycles_perf_event *ev,
                            cpucycles_perf_rdpmc_fn rdpmc,
                            unsigned long long config1)
{
  long long count, last = plus(ev->seen, ev->base);
  int i, live = 0;

  for (i = 0; i <= ev->more; i++)
    if (!cpucycles_perf_is_ours(ev, i)) *cpucycles_perf_fd_of(ev, i) = -1;
  if (rdpmc ? read_each(ev, rdpmc, &count, &live) != 0
            : cpucycles_perf_open(ev, 0, config1) != 0 || read_counting(ev, &count) != 0)
    return give_up(ev, last);
  if (!rdpmc) ev->base = minus(last, count); /* the new event's */
  return value_of(ev, count, live);
}

long long cpucycles_perf_read(struct cpucycles_perf_event *ev,
                              cpucycles_perf_rdpmc_fn rdpmc,
                              unsigned long long config1)
{
  long long count;
  int r, live = 0;

  if (cpucycles_perf_open_once(ev, rdpmc != 0, config1) && !rdpmc) {
    /* a thread's own read(2) event must count, as in setup */
    if (read_counting(ev, &count) == 0) return value_of(ev, count, 0);
    return give_up(ev, 0);
  }
  if (ev->kind != cpucycles_perf_kind(rdpmc != 0, config1)) /* (open_once) */
    return cpucycles_perf_fallback();
  if (!cpucycles_perf_is_open(ev)) return plus(cpucycles_perf_fallback(), ev->base);
  if (ev->state == CPUCYCLES_PERF_OPEN && rdpmc &&
      cpucycles_perf_page_read(ev->page, rdpmc, &count) == 0)
    return plus(count, ev->base);
  r = ev->state == CPUCYCLES_PERF_OPEN ? read_event(ev, 0, &count)
                                       : read_each(ev, rdpmc, &count, &live);
  if (r == 0) return value_of(ev, count, live);
  if (r > 0 || rdpmc) return lost_event(ev, rdpmc, config1);
  return give_up(ev, plus(ev->seen, ev->base)); /* its read(2) failed */
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
        read_event(ev, 0, &count) != 0)
      return cpucycles_perf_refuse(ev, info, CPUCYCLES_REFUSAL_PERF_READ, errno);
    info->may_fault = 1;
  } else if ((r = read_counting(ev, &count)) != 0) {
    return r > 0 ? cpucycles_perf_refuse(ev, info, CPUCYCLES_PERF_REFUSAL_STUCK, 0)
                 : cpucycles_perf_refuse(ev, info, CPUCYCLES_REFUSAL_PERF_READ, errno);
  } else {
    cpucycles_osclock_choose(); /* its reads read the clock (value_of) */
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
