/* perf-event.c: a thread's perf cycles event: its open, identity and
 * close, the perf code's lowest layer (perf-event.h), which knows
 * nothing of the registry that serialises, lists and closes events.  The
 * program may close our descriptors (close_range) and reuse the numbers
 * (doc/perf-counters.md, "Descriptors"), so each event's kernel id
 * (PERF_EVENT_IOC_ID) is asked before every read(2) and close: a number no
 * longer the event's is never read, written or closed again.  No id:
 * trusted. */
#include "perf-event.h" /* first: config.h, _GNU_SOURCE */

#ifdef CPUCYCLES_PERF_AVAILABLE

#include "counter.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#ifndef PERF_FLAG_FD_CLOEXEC
#define PERF_FLAG_FD_CLOEXEC (1UL << 3) /* Linux 3.14 */
#endif

/* The core PMUs, under the callers' serialisation (perf-event.h). */
static struct {
  struct cpucycles_pmu pmu[CPUCYCLES_PMU_MAX];
  int looked;       /* (all zero: in .bss) */
  int found;        /* how many, once looked */
  const char *root; /* where they were looked for */
} core;

/* The process's events' most descriptors: a quarter of the soft
 * RLIMIT_NOFILE, the rest left to the program; past it a thread reads the
 * fallback. */
static long events_ceiling(void)
{
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
      rl.rlim_cur / 4 >= (rlim_t) LONG_MAX)
    return LONG_MAX;
  return (long) (rl.rlim_cur / 4);
}

static unsigned long long event_id(int fd)
{
  unsigned long long id = 0;
  if (cpucycles_perf_ops.ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) return 0;
  return id;
}

static int open_attr_cloexec(struct perf_event_attr *attr)
{
  int fd, flags;
  fd = cpucycles_perf_ops.open(attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd >= 0 || errno != EINVAL) return fd;
  /* Before 3.14 the flag is refused: set it by hand (racy against a
   * fork+exec in another thread, which is all those kernels allow). */
  fd = cpucycles_perf_ops.open(attr, 0, -1, -1, 0);
  if (fd < 0) return -1;
  flags = fcntl(fd, F_GETFD);
  if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) != 0) {
    close(fd);
    errno = EBADF;
    return -1;
  }
  return fd;
}

/* User mode only (what perf_event_paranoid 2 allows; what a benchmark
 * wants), then, where the PMU refuses (EINVAL, EOPNOTSUPP), with the
 * hypervisor, the kernel, both.  Other errors are the same for all. */
static int open_cycles_as(unsigned int type, unsigned long long config,
                          unsigned long long config1)
{
  static const unsigned char exclusions[4][2] = {
    /* exclude_kernel, exclude_hv */
    { 1, 1 }, { 1, 0 }, { 0, 1 }, { 0, 0 }
  };
  struct perf_event_attr attr;
  int fd, i;

  memset(&attr, 0, sizeof attr);
  attr.type = type;
  attr.size = sizeof attr;
  attr.config = config;
  attr.config1 = config1; /* arm64: user access, 64-bit counter */
  for (i = 0; i < 4; i++) {
    attr.exclude_kernel = exclusions[i][0];
    attr.exclude_hv = exclusions[i][1];
    fd = open_attr_cloexec(&attr);
    if (fd >= 0) return fd;
    if (errno != EINVAL && errno != EOPNOTSUPP) return -1;
  }
  return -1;
}

/* Core PMU p's cycles: the generic event with p's type in config's upper
 * half (x86 since 5.13, Arm later), else p's own event from sysfs. */
static int open_on_pmu(const struct cpucycles_pmu *p, unsigned long long config1)
{
  int fd = open_cycles_as(PERF_TYPE_HARDWARE,
                          PERF_COUNT_HW_CPU_CYCLES |
                            (unsigned long long) p->type << 32,
                          config1);
  if (fd >= 0 || !p->has_raw) return fd;
  if (errno != EINVAL && errno != ENOENT && errno != EOPNOTSUPP) return -1;
  return open_cycles_as(p->type, p->raw, config1);
}

/* can_open's event, which the open that follows takes or closes */
static struct { int fd, held; } spare;

static int open_plain(unsigned long long config1)
{
  if (__atomic_exchange_n(&spare.held, 0, __ATOMIC_RELAXED)) return spare.fd;
  return open_cycles_as(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, config1);
}

/* A new root (tests) forgets the look. */
static void check_root(void)
{
  const char *root = cpucycles_perf_ops.sysfs_root();
  if (root != core.root) {
    core.root = root;
    core.looked = 0;
  }
}

/* The self-monitoring page of fd (no ring buffer), or 0. */
static void *map_page_of(int fd)
{
  void *page = mmap(0, cpucycles_perf_page_size(), PROT_READ, MAP_SHARED, fd, 0);
  return page == MAP_FAILED ? 0 : page;
}

/* Close n opened events, keeping errno. */
static void undo_opens(const int *fds, void *const *pages, int n)
{
  int err = errno;
  while (n-- > 0) {
    if (pages[n]) munmap(pages[n], cpucycles_perf_page_size());
    close(fds[n]);
  }
  errno = err;
}

/* One event per core PMU on a hybrid CPU, else the one plain event: all
 * or none, mapped with map_page.  The process's first event looks for the
 * core PMUs (not before: a machine without perf events reads no sysfs for
 * them); two or more make it hybrid. */
static int open_all(struct cpucycles_perf_event *ev, int map_page,
                    unsigned long long config1, long held)
{
  int fds[CPUCYCLES_PMU_MAX] = { 0 };
  void *pages[CPUCYCLES_PMU_MAX] = { 0 };
  int i, n;
  const struct cpucycles_pmu *pmus;

  check_root();
  pmus = core.looked && core.found >= 2 ? core.pmu : 0;
  n = pmus ? core.found : 1;
  if (n > CPUCYCLES_PMU_MAX) {
    errno = ENOSPC; /* setup says why: CPUCYCLES_PERF_REFUSAL_PMUS */
    return -1;
  }
  if (held + n > events_ceiling()) {
    errno = EMFILE;
    return -1;
  }
  for (i = 0; i < n; i++) {
    fds[i] = pmus ? open_on_pmu(&pmus[i], config1) : open_plain(config1);
    if (fds[i] < 0) {
      undo_opens(fds, pages, i);
      return -1;
    }
    if (!pmus && !core.looked) {
      core.found = cpucycles_pmu_discover(core.root, core.pmu, CPUCYCLES_PMU_MAX);
      core.looked = 1;
      if (core.found >= 2) {
        close(fds[0]);
        return open_all(ev, map_page, config1, held);
      }
    }
    if (map_page && !(pages[i] = map_page_of(fds[i]))) {
      undo_opens(fds, pages, i + 1);
      return -1;
    }
  }
  ev->more = n - 1;
  for (i = 0; i < n; i++) {
    *cpucycles_perf_fd_of(ev, i) = fds[i];
    *cpucycles_perf_page_of(ev, i) = pages[i];
    *(i == 0 ? &ev->id : &ev->more_id[i - 1]) = event_id(fds[i]);
  }
  ev->kind = cpucycles_perf_kind(map_page, config1);
  ev->state = pmus ? CPUCYCLES_PERF_OPEN_EACH_PMU : CPUCYCLES_PERF_OPEN;
  return 0;
}

int cpucycles_perf_event_open(struct cpucycles_perf_event *ev, int map_page,
                              unsigned long long config1, long held)
{
  int result = open_all(ev, map_page, config1, held);
  if (__atomic_exchange_n(&spare.held, 0, __ATOMIC_RELAXED)) close(spare.fd);
  return result;
}

int cpucycles_perf_can_open(struct counter_info *info, unsigned long long config1)
{
  int fd = open_cycles_as(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, config1);
  if (fd < 0) return counter_refuse(info, CPUCYCLES_REFUSAL_PERF_OPEN, errno);
  if (__atomic_exchange_n(&spare.held, 1, __ATOMIC_RELAXED)) close(spare.fd);
  spare.fd = fd;
  return 0;
}

int cpucycles_perf_event_pmus(struct cpucycles_pmu *pmus, int max)
{
  int found, i;
  check_root();
  found = core.looked ? core.found : -1;
  for (i = 0; pmus && i < found && i < max && i < CPUCYCLES_PMU_MAX; i++)
    pmus[i] = core.pmu[i];
  return found;
}

int cpucycles_perf_is_ours(struct cpucycles_perf_event *ev, int i)
{
  unsigned long long id = i == 0 ? ev->id : ev->more_id[i - 1];
  int fd = *cpucycles_perf_fd_of(ev, i);
  if (fd < 0) return 0;
  return id == 0 || event_id(fd) == id;
}

void cpucycles_perf_close_fds(struct cpucycles_perf_event *ev)
{
  int i;
  if (!cpucycles_perf_is_open(ev)) return;
  for (i = 0; i <= ev->more; i++) {
    if (cpucycles_perf_is_ours(ev, i)) close(*cpucycles_perf_fd_of(ev, i));
    *cpucycles_perf_fd_of(ev, i) = -1;
  }
}

void cpucycles_perf_forget(struct cpucycles_perf_event *ev)
{
  int i;
  ev->state = CPUCYCLES_PERF_UNOPENED;
  ev->fd = -1;
  ev->page = 0;
  ev->id = 0;
  ev->epoch = 0;
  ev->timed = 0;
  ev->base = 0;
  ev->seen = 0;
  ev->seen_at = 0;
  for (i = 0; i < ev->more; i++) {
    ev->more_fd[i] = -1;
    ev->more_page[i] = 0;
    ev->more_id[i] = 0;
  }
  ev->more = 0;
}

void cpucycles_perf_event_close(struct cpucycles_perf_event *ev)
{
  int i;
  if (cpucycles_perf_is_open(ev)) {
    for (i = 0; i <= ev->more; i++) {
      volatile struct perf_event_mmap_page **page = cpucycles_perf_page_of(ev, i);
      if (*page) munmap((void *) *page, cpucycles_perf_page_size());
      *page = 0;
    }
    cpucycles_perf_close_fds(ev);
  }
  cpucycles_perf_forget(ev);
}

#else

typedef int cpucycles_perf_event_unavailable;

#endif
