/* perf.c: opening, closing and reading per-thread perf cycles events for
 * the perf_event counters, and what those counters do alike (the slow
 * path of a read, setup).  See perf.h and doc/perf-counters.md.
 *
 * Built on every host; on a system without Linux perf_event it compiles to
 * nothing. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "perf.h"

#ifdef CPUCYCLES_PERF_AVAILABLE

#include "counter.h"
#include "osclock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef PERF_FLAG_FD_CLOEXEC
#define PERF_FLAG_FD_CLOEXEC (1UL << 3) /* Linux 3.14 */
#endif

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

static cpucycles_perf_open_fn opener = perf_event_open_syscall;

void cpucycles_perf_set_opener(cpucycles_perf_open_fn open_fn)
{
  opener = open_fn ? open_fn : perf_event_open_syscall;
}

/* ---- closing at thread exit ----
 *
 * Each thread keeps a list of its open events (normally one: that of the
 * chosen counter; during the probe, one per perf counter tried).  A pthread
 * key whose value is non-null while the list is non-empty makes the thread
 * library call close_thread_events() as the thread exits.  The key is
 * created once, on the first open, which is under the library's init.
 * glibc stores the values of the first 32 keys inside the thread
 * descriptor, so pthread_setspecific() allocates nothing here. */

static __thread struct cpucycles_perf_event *thread_events
  __attribute__((tls_model("initial-exec")));
static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;
static int thread_key_ok;

static void close_thread_events(void *unused)
{
  (void) unused;
  while (thread_events) cpucycles_perf_close(thread_events);
}

static void create_thread_key(void)
{
  thread_key_ok = pthread_key_create(&thread_key, close_thread_events) == 0;
}

static int link_event(struct cpucycles_perf_event *ev)
{
  pthread_once(&thread_key_once, create_thread_key);
  if (!thread_key_ok) return -1; /* an event nobody would close: refuse */
  if (pthread_setspecific(thread_key, ev) != 0) return -1;
  ev->next = thread_events;
  thread_events = ev;
  ev->linked = 1;
  return 0;
}

static void unlink_event(struct cpucycles_perf_event *ev)
{
  struct cpucycles_perf_event **p;

  if (!ev->linked) return;
  for (p = &thread_events; *p; p = &(*p)->next)
    if (*p == ev) {
      *p = ev->next;
      break;
    }
  ev->next = 0;
  ev->linked = 0;
  /* Keep the key's value non-null exactly while events remain. */
  if (thread_key_ok) pthread_setspecific(thread_key, thread_events);
}

/* ---- opening ---- */

static int open_cycles(unsigned long long config1)
{
  struct perf_event_attr attr;
  int fd, flags;

  memset(&attr, 0, sizeof attr);
  attr.type = PERF_TYPE_HARDWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  /* User mode only: what perf_event_paranoid 2 (the upstream default)
   * still allows an unprivileged process, and what a benchmark wants. */
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  /* PMU-specific: on arm64, user access (bit 1) and a 64-bit counter
   * (bit 0); see the counter that asks. */
  attr.config1 = config1;

  fd = opener(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd >= 0) return fd;
  if (errno != EINVAL) return -1;

  /* Kernels before 3.14 refuse the flag with EINVAL: open without it and
   * set close-on-exec by hand (racy against a concurrent fork+exec in
   * another thread, which is all those kernels allow). */
  fd = opener(&attr, 0, -1, -1, 0);
  if (fd < 0) return -1;
  flags = fcntl(fd, F_GETFD);
  if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int cpucycles_perf_open(struct cpucycles_perf_event *ev, int map_page,
                        unsigned long long config1)
{
  void *page = 0;
  long pagesize;
  int fd;

  cpucycles_perf_close(ev);

  fd = open_cycles(config1);
  if (fd < 0) return -1;

  if (map_page) {
    /* One page: the self-monitoring header, no ring buffer. */
    pagesize = sysconf(_SC_PAGESIZE);
    if (pagesize <= 0) pagesize = 4096;
    page = mmap(0, (size_t) pagesize, PROT_READ, MAP_SHARED, fd, 0);
    if (page == MAP_FAILED) {
      close(fd);
      return -1;
    }
  }

  ev->fd = fd;
  ev->page = page;
  if (link_event(ev) != 0) {
    if (page) munmap(page, (size_t) sysconf(_SC_PAGESIZE));
    close(fd);
    ev->fd = -1;
    ev->page = 0;
    return -1;
  }
  ev->state = CPUCYCLES_PERF_OPEN;
  return 0;
}

int cpucycles_perf_open_once(struct cpucycles_perf_event *ev, int map_page,
                             unsigned long long config1)
{
  if (ev->state != CPUCYCLES_PERF_UNOPENED) return 0;
  if (cpucycles_perf_open(ev, map_page, config1) == 0) return 1;
  ev->state = CPUCYCLES_PERF_FALLBACK;
  return 0;
}

/* ---- closing ---- */

static void forget(struct cpucycles_perf_event *ev)
{
  ev->state = CPUCYCLES_PERF_UNOPENED;
  ev->fd = -1;
  ev->page = 0;
  ev->fast = 0;
}

void cpucycles_perf_close(struct cpucycles_perf_event *ev)
{
  unlink_event(ev);
  if (ev->state == CPUCYCLES_PERF_OPEN) {
    if (ev->page) munmap((void *) ev->page, (size_t) sysconf(_SC_PAGESIZE));
    if (ev->fd >= 0) close(ev->fd);
  }
  forget(ev);
}

void cpucycles_perf_atfork_child(struct cpucycles_perf_event *ev)
{
  unlink_event(ev);
  /* The descriptor is inherited and counts the parent's thread: close it.
   * The page is not: Linux marks perf mappings VM_DONTCOPY, so the address
   * is unmapped in the child and may already hold someone else's mapping
   * (another fork handler's), which munmap() would destroy. */
  if (ev->state == CPUCYCLES_PERF_OPEN && ev->fd >= 0) close(ev->fd);
  forget(ev);
}

/* ---- reading ---- */

int cpucycles_perf_read_fd(int fd, long long *out)
{
  long long count;

  if (fd < 0) return -1;
  if (read(fd, &count, sizeof count) != (ssize_t) sizeof count) return -1;
  *out = count;
  return 0;
}

static long long fallback_persecond = 1000000000LL;
static long long fallback_base_sec;
static cpucycles_perf_clock_fn fallback_clock = cpucycles_osclock_gettime;

void cpucycles_perf_set_clock(cpucycles_perf_clock_fn clock_fn)
{
  fallback_clock = clock_fn ? clock_fn : cpucycles_osclock_gettime;
}

void cpucycles_perf_set_persecond(long long persecond)
{
  struct timespec t;

  if (persecond <= 0) return;
  cpucycles_osclock_setup();
  if (fallback_clock(CLOCK_MONOTONIC, &t) == 0)
    __atomic_store_n(&fallback_base_sec, (long long) t.tv_sec, __ATOMIC_RELAXED);
  __atomic_store_n(&fallback_persecond, persecond, __ATOMIC_RELEASE);
}

long long cpucycles_perf_fallback(void)
{
  long long persecond = __atomic_load_n(&fallback_persecond, __ATOMIC_ACQUIRE);
  unsigned long long seconds;
  struct timespec t;

  if (fallback_clock(CLOCK_MONOTONIC, &t) != 0) return 0;
  /* The clock's seconds can be anything: a time namespace offsets
   * CLOCK_MONOTONIC by up to centuries, and seconds times a frequency
   * would overflow.  Count from the second taken on the first call
   * instead, in unsigned arithmetic (a wrap, not undefined behaviour, if
   * the clock were ever set back before it).  The nanoseconds go through
   * a double, exact to far below a cycle. */
  seconds = (unsigned long long) t.tv_sec -
            (unsigned long long) __atomic_load_n(&fallback_base_sec, __ATOMIC_RELAXED);
  return (long long) (seconds * (unsigned long long) persecond +
                      (unsigned long long) ((double) t.tv_nsec * (double) persecond / 1e9));
}

long long cpucycles_perf_read(struct cpucycles_perf_event *ev,
                              cpucycles_perf_rdpmc_fn rdpmc,
                              unsigned long long config1)
{
  long long count;

  cpucycles_perf_open_once(ev, rdpmc != 0, config1);
  if (ev->state == CPUCYCLES_PERF_OPEN) {
    if (rdpmc && cpucycles_perf_page_read(ev->page, rdpmc, &count) == 0)
      return count;
    if (cpucycles_perf_read_fd(ev->fd, &count) == 0) return count;
    /* The descriptor stopped answering: from now on this thread reads the
     * clock, so that its values stay in one unit. */
    cpucycles_perf_close(ev);
    ev->state = CPUCYCLES_PERF_FALLBACK;
  }
  return cpucycles_perf_fallback();
}

/* ---- setup ---- */

int cpucycles_perf_setup(struct cpucycles_perf_event *ev,
                         cpucycles_perf_rdpmc_fn rdpmc,
                         unsigned long long config1,
                         struct counter_info *info)
{
  long long count;

  if (cpucycles_perf_open(ev, rdpmc != 0, config1) != 0) return -1;
  if (rdpmc) {
    /* Without user reads (x86: sysfs rdpmc 0; arm64: perf_user_access 0;
     * RISC-V: perf_user_access 0; or a hypervisor that does not offer
     * them) every read would be a read(2): default-perfevent's job. */
    if (!ev->page->cap_user_rdpmc) {
      cpucycles_perf_close(ev);
      return -1;
    }
    /* Try the instruction now (unless the event is momentarily off the
     * hardware, index 0): the probe catches the fault. */
    if (cpucycles_perf_page_read(ev->page, rdpmc, &count) != 0 &&
        cpucycles_perf_read_fd(ev->fd, &count) != 0) {
      cpucycles_perf_close(ev);
      return -1;
    }
  } else if (cpucycles_perf_read_fd(ev->fd, &count) != 0) {
    cpucycles_perf_close(ev);
    return -1;
  }
  info->kind = rdpmc ? COUNTER_ONCORE : COUNTER_PERFEVENT;
  info->frequency = 0;
  info->only32 = 0;
  return 0;
}

#else

/* ISO C wants something in every translation unit. */
typedef int cpucycles_perf_unavailable;

#endif
