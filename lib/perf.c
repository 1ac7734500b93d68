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

#include "forkhold.h"
#include "osclock.h"
#include "pmu.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef PERF_FLAG_FD_CLOEXEC
#define PERF_FLAG_FD_CLOEXEC (1UL << 3) /* Linux 3.14 */
#endif

/* ---- which descriptors are still ours ----
 *
 * The program owns its descriptor table.  A daemon that calls
 * close_range(3, ~0U) or closefrom(3) after the first call closes the
 * events' descriptors too, and its next open() gets the lowest free
 * number.  So an event does not live at the number perf_event_open gave
 * it: it is moved (F_DUPFD_CLOEXEC) to the top quarter of the soft
 * RLIMIT_NOFILE (at most EVENTS_HIGH_MAX), where open() lands only in a
 * program that holds that many descriptors at once.  There a read(2)
 * needs no question first: a closed number answers EBADF, and only a
 * dup2() of the program's onto that very number could put a file of its
 * own there (doc/security.md).  Every event records its identity when it
 * is opened (the kernel's event id, PERF_EVENT_IOC_ID, Linux 3.12), asked
 * again on the slow paths (a read that failed, the ioctls of the remedy, a
 * close): another file there answers the ioctl with ENOTTY (the ioctl
 * number is perf's own), a closed number with EBADF, another event with
 * another id.  A descriptor that is no longer the event's is never read,
 * written or closed again: the library forgets the number.  An event that
 * could not be moved (no room up there) is asked before each read(2), as
 * is every descriptor on the slow paths.  Kernels without the ioctl (and
 * the tests' stand-in events) give no id: 0, and then the descriptor is
 * trusted.  The page-reading hot paths use no descriptor and ask nothing. */

#define EVENTS_HIGH_MAX 4096

/* Where the events live: the top quarter of the soft RLIMIT_NOFILE, at
 * most EVENTS_HIGH_MAX (the kernel's table grows to the highest number:
 * kept small where the limit is huge); 0 where there is no room. */
static int high_base(void)
{
  struct rlimit rl;
  rlim_t base;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < 8) return 0;
  base = rl.rlim_cur - rl.rlim_cur / 4;
  return base > EVENTS_HIGH_MAX ? EVENTS_HIGH_MAX : (int) base;
}

/* fd moved to the lowest free number at or above base (close-on-exec);
 * fd itself where that fails.  Sets *asks when it stays below. */
static int move_high(int fd, int base, int *asks)
{
  int high;
  if (base > 0 && fd < base && (high = fcntl(fd, F_DUPFD_CLOEXEC, base)) >= 0) {
    close(fd);
    return high;
  }
  if (fd < base || base == 0) *asks = 1;
  return fd;
}

static unsigned long long event_id(int fd)
{
  unsigned long long id = 0;
  if (cpucycles_perf_ops.ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) return 0;
  return id;
}

/* ---- the registry of open events ----
 *
 * Each thread keeps a list of its open events (normally one: that of the
 * chosen counter; during the probe, one per perf counter tried), and every
 * open event of every thread is also on one process-wide list, under
 * registry.  The thread's list closes its events when it exits: a pthread
 * key whose value is non-null while the list is non-empty makes the thread
 * library call close_thread_events() then.  The process-wide list closes
 * the events of all threads in a child after fork() (only the forking
 * thread exists there, but every thread's descriptors were copied) and
 * when the library is unloaded.  glibc stores the values of the first 32
 * keys inside the thread descriptor and allocates a block (calloc) for
 * those of the others, per thread, on their first pthread_setspecific();
 * so the key is created when the library is loaded, before the program's
 * own keys (a program that made 40 keys before its first read would
 * otherwise give the library key 40, and each thread's first read an
 * allocation).
 *
 * registry is held around each open, close and list change, and by fork's
 * prepare handler, so that a child never inherits a descriptor that is not
 * on the list, nor a half-changed list.  A signal handler of a thread that
 * is in the registry (or waiting for it) must not wait for it: the
 * thread-local registry_mine, set before the lock is taken and cleared
 * after it is given back, makes such a handler's open fail (its read
 * answers the fallback clock) and its close wait for a later one.  So no
 * signal mask is needed, and a first call where no perf event opens makes
 * no signal system call.  fork's prepare handler and unloading touch no
 * thread-local (where they are allocated on first access, doc/security.md)
 * and block every signal instead. */

static __thread struct cpucycles_perf_event *thread_events;
static struct cpucycles_perf_event *all_events;
static long held_events; /* on all_events, under registry */
static pthread_mutex_t registry = PTHREAD_MUTEX_INITIALIZER;
static sigset_t fork_saved_mask;
static __thread volatile int registry_mine;
static pthread_key_t thread_key;
static int thread_key_state; /* 0 not created, 1 created, -1 failed or deleted */
/* Set (under registry, never cleared) when the first event is linked.
 * Until then no thread can hold an event, and the paths that would only
 * close one leave the thread-locals alone: where they are allocated on a
 * thread's first access (glibc's dynamic TLS, a library loaded with
 * dlopen() once the static TLS reserve is used up: doc/security.md), a
 * first call that opens no event touches none. */
static int events_ever_linked;

/* ---- which process the events belong to ----
 *
 * fork()'s child gets the library's fork handlers, which drop every
 * inherited event (cpucycles_perf_fork_child).  A child made without them
 * (glibc's _Fork(), as posix_spawn-like code uses; a raw clone()) inherits
 * the events' thread-locals as they were: its threads' reads would use
 * the parent's pages, which Linux does not map into a child (VM_DONTCOPY:
 * a crash), or read(2) the parent's events (the parent's counts), and the
 * registry may be locked by a thread that does not exist there.
 *
 * So each event carries the epoch of the process that opened it, and the
 * epoch lives in a page that a child sees filled with zeros
 * (MADV_WIPEONFORK, Linux 4.14): the fast paths compare the two (one more
 * load and compare beside the state's), and in such a child they differ.
 * The first thread there to take the registry adopts the process: it
 * makes the registry a fresh mutex (nobody else in the child can hold it:
 * they wait for the epoch), drops every inherited event as the fork
 * handler would, and sets the child's epoch, one more than its parent's.
 * The page is mapped when the process's first event is linked (nothing
 * where no event opens) and unmapped when the library is unloaded, unless
 * another thread's event is still open then (its hot path reads the
 * epoch, as it reads its page).  Where the page cannot be wiped
 * (an older kernel), the epoch is a plain static: fork() children are
 * still handled by the fork handlers, _Fork() children are not
 * (doc/perf-counters.md, "Fork"). */

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18 /* Linux 4.14 */
#endif
static volatile unsigned int *epoch_page; /* [0]: the epoch, [1]: claimed */
static unsigned int plain_epoch;          /* when there is no such page */
static unsigned int epoch_value;          /* this process's (0: none yet) */
const volatile unsigned int *cpucycles_perf_epoch = &plain_epoch;

static void drop_inherited_locked(void);
static size_t page_size(void);

/* Under registry (or alone in the process): the first event's epoch. */
static void set_up_epoch_locked(void)
{
  void *page;

  if (epoch_value) return;
  epoch_value = 1;
  page = mmap(0, page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page != MAP_FAILED) {
    if (madvise(page, page_size(), MADV_WIPEONFORK) == 0) {
      volatile unsigned int *words = page;
      /* Filled in before it is published: a thread that sees the page
       * with a 0 epoch takes itself for a child's and adopts. */
      __atomic_store_n(&words[1], 1, __ATOMIC_RELAXED);
      __atomic_store_n(&words[0], epoch_value, __ATOMIC_RELAXED);
      __atomic_store_n(&epoch_page, words, __ATOMIC_RELEASE);
      __atomic_store_n(&cpucycles_perf_epoch, words, __ATOMIC_RELEASE);
      return;
    }
    munmap(page, page_size());
  }
  __atomic_store_n(&plain_epoch, epoch_value, __ATOMIC_RELEASE);
}

/* The next epoch, in a child whose page was wiped. */
static void next_epoch(void)
{
  epoch_value += 1;
  if (epoch_value == 0) epoch_value = 1;
  __atomic_store_n(&epoch_page[1], 1, __ATOMIC_RELAXED);
  __atomic_store_n(&epoch_page[0], epoch_value, __ATOMIC_RELEASE);
}

/* In a child made without the fork handlers (the epoch page reads 0),
 * the first caller adopts the process; the others wait for it. */
static void adopt_if_child(void)
{
  volatile unsigned int *page = __atomic_load_n(&epoch_page, __ATOMIC_ACQUIRE);

  if (!page || __atomic_load_n(&page[0], __ATOMIC_ACQUIRE) != 0) return;
  if (__atomic_exchange_n(&page[1], 1, __ATOMIC_ACQ_REL) == 0) {
    static const pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&registry, &fresh, sizeof registry);
    drop_inherited_locked();
    next_epoch();
    return;
  }
  while (__atomic_load_n(&page[0], __ATOMIC_ACQUIRE) == 0) sched_yield();
}

/* fork's prepare handler holds registry (signals blocked) until the
 * parent or child handler; a handler of the program that runs in between
 * in the forking thread (forkhold.h) uses it as held. */
static struct cpucycles_fork_hold registry_for_fork;

/* 0 with registry held; -1 in a signal handler whose thread is in the
 * registry already (above). */
static int lock_registry(void)
{
  if (cpucycles_fork_hold_mine(&registry_for_fork)) return 0;
  if (registry_mine) return -1;
  registry_mine = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  adopt_if_child();
  pthread_mutex_lock(&registry);
  return 0;
}

static void unlock_registry(void)
{
  if (cpucycles_fork_hold_mine(&registry_for_fork)) return;
  pthread_mutex_unlock(&registry);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  registry_mine = 0;
}

/* fork's prepare and unloading: every signal blocked, no thread-local. */
static void lock_registry_masked(sigset_t *saved)
{
  sigset_t all;
  sigfillset(&all);
  if (pthread_sigmask(SIG_BLOCK, &all, saved) != 0) sigemptyset(saved);
  adopt_if_child();
  pthread_mutex_lock(&registry);
}

static void unlock_registry_masked(const sigset_t *saved)
{
  pthread_mutex_unlock(&registry);
  pthread_sigmask(SIG_SETMASK, saved, 0);
}

static void close_locked(struct cpucycles_perf_event *ev);

static void close_thread_events(void *unused)
{
  (void) unused;
  if (lock_registry() != 0) return;
  /* (A list whose head is not linked was dropped by another thread that
   * adopted a child process: nothing on it is open.) */
  while (thread_events && thread_events->linked) close_locked(thread_events);
  thread_events = 0;
  unlock_registry();
}

/* The key, at load: a constructor runs before main() in a program linked
 * with the library, and at dlopen() in a plug-in host. */
__attribute__((constructor)) static void create_thread_key(void)
{
  if (thread_key_state == 0)
    thread_key_state = pthread_key_create(&thread_key, close_thread_events) == 0 ? 1 : -1;
}

/* Under registry. */
static int link_event(struct cpucycles_perf_event *ev)
{
  if (thread_key_state != 1) return -1; /* an event nobody would close: refuse */
  if (pthread_setspecific(thread_key, ev) != 0) return -1;
  set_up_epoch_locked();
  ev->epoch = epoch_value;
  /* A head that is not linked: this thread's list was dropped by another
   * thread that adopted a child process (above); start it again. */
  if (thread_events && !thread_events->linked) thread_events = 0;
  ev->next = thread_events;
  thread_events = ev;
  ev->all_next = all_events;
  all_events = ev;
  held_events += 1 + ev->more;
  ev->linked = 1;
  __atomic_store_n(&events_ever_linked, 1, __ATOMIC_RELAXED);
  return 0;
}

/* Under registry. */
static void unlink_event(struct cpucycles_perf_event *ev)
{
  struct cpucycles_perf_event **p;

  if (!ev->linked) return;
  for (p = &thread_events; *p; p = &(*p)->next)
    if (*p == ev) {
      *p = ev->next;
      break;
    }
  for (p = &all_events; *p; p = &(*p)->all_next)
    if (*p == ev) {
      *p = ev->all_next;
      held_events -= 1 + ev->more;
      break;
    }
  ev->next = 0;
  ev->all_next = 0;
  ev->linked = 0;
  /* Keep the key's value non-null exactly while events remain. */
  if (thread_key_state == 1) pthread_setspecific(thread_key, thread_events);
}

/* ---- opening ---- */

/* One perf_event_open of attr for the calling thread, close-on-exec. */
static int open_attr_cloexec(struct perf_event_attr *attr)
{
  int fd, flags;

  fd = cpucycles_perf_ops.open(attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd >= 0) return fd;
  if (errno != EINVAL) return -1;

  /* Kernels before 3.14 refuse the flag with EINVAL: open without it and
   * set close-on-exec by hand (racy against a concurrent fork+exec in
   * another thread, which is all those kernels allow). */
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

/* The privilege-level exclusions asked for, in order of preference: user
 * mode only first; then counting the hypervisor too (some PMUs and
 * hypervisors refuse exclude_hv); then the kernel too, with and without
 * the hypervisor (a PMU that cannot exclude the kernel).  See
 * doc/perf-counters.md. */
static const unsigned char exclusions[4][2] = {
  /* exclude_kernel, exclude_hv */
  { 1, 1 }, { 1, 0 }, { 0, 1 }, { 0, 0 }
};

/* The event of type and config for the calling thread, through the
 * exclusions. */
static int open_cycles_as(unsigned int type, unsigned long long config,
                          unsigned long long config1)
{
  struct perf_event_attr attr;
  int fd, i;

  memset(&attr, 0, sizeof attr);
  attr.type = type;
  attr.size = sizeof attr;
  attr.config = config;
  /* PMU-specific: on arm64, user access (bit 1) and a 64-bit counter
   * (bit 0); see the counter that asks. */
  attr.config1 = config1;

  for (i = 0; i < 4; i++) {
    /* User mode only is what perf_event_paranoid 2 (the upstream
     * default) still allows an unprivileged process, and what a
     * benchmark wants; the others only when the PMU refuses it. */
    attr.exclude_kernel = exclusions[i][0];
    attr.exclude_hv = exclusions[i][1];
    fd = open_attr_cloexec(&attr);
    if (fd >= 0) return fd;
    /* EINVAL and EOPNOTSUPP: this combination is refused, another may
     * not be.  Anything else (EACCES and EPERM: a wider count needs more
     * privilege, not less; ENOENT, ENODEV: no such event; EMFILE, ENFILE,
     * ENOMEM) would be the same answer for every combination. */
    if (errno != EINVAL && errno != EOPNOTSUPP) return -1;
  }
  return -1;
}

static int open_cycles(unsigned long long config1)
{
  return open_cycles_as(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, config1);
}

/* ---- hybrid CPUs: one event per core PMU ----
 *
 * Looked for once, by the process's first successful open (the probe's,
 * normally), under registry: every later open reads the result under
 * registry too. */

static struct cpucycles_pmu core_pmus[CPUCYCLES_PMU_MAX];
static int core_pmus_found = -1; /* -1: not looked for yet */
static const char *core_pmus_root; /* where they were looked for */

/* Under registry: a new root (tests) forgets the look. */
static void check_root_locked(void)
{
  const char *root = cpucycles_perf_ops.sysfs_root();
  if (root != core_pmus_root) {
    core_pmus_root = root;
    core_pmus_found = -1;
  }
}

static void find_core_pmus_locked(void)
{
  if (core_pmus_found < 0)
    core_pmus_found = cpucycles_pmu_discover(core_pmus_root, core_pmus,
                                             CPUCYCLES_PMU_MAX);
}

/* The cycles event of core PMU p for the calling thread: the generic
 * hardware event with p's type in config's upper half (hybrid x86 since
 * Linux 5.13, Arm PMUs since later), else p's own cycles event as sysfs
 * describes it, for kernels that refuse the extended type (EINVAL,
 * ENOENT, EOPNOTSUPP). */
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

static long events_ceiling(void)
{
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
      rl.rlim_cur / 4 >= (rlim_t) LONG_MAX)
    return LONG_MAX;
  if (rl.rlim_cur / 4 < 16) return 16;
  return (long) (rl.rlim_cur / 4);
}

static size_t page_size(void)
{
  long pagesize = sysconf(_SC_PAGESIZE);
  return pagesize > 0 ? (size_t) pagesize : 4096;
}

/* One page of event fd: the self-monitoring header, no ring buffer.
 * Returns it, or 0 with errno set. */
static void *map_page_of(int fd)
{
  void *page = mmap(0, page_size(), PROT_READ, MAP_SHARED, fd, 0);
  return page == MAP_FAILED ? 0 : page;
}

/* Close what open_each_locked() had opened when it failed, keeping errno. */
static void undo_opens(const int *fds, void *const *pages, int n)
{
  int err = errno;
  while (n-- > 0) {
    if (pages[n]) munmap(pages[n], page_size());
    close(fds[n]);
  }
  errno = err;
}

/* A hybrid CPU: one event per core PMU, all or none. */
static int open_each_locked(struct cpucycles_perf_event *ev, int map_page,
                            unsigned long long config1)
{
  int fds[CPUCYCLES_PMU_MAX] = { 0 };
  void *pages[CPUCYCLES_PMU_MAX] = { 0 };
  int i, n = core_pmus_found, base = high_base(), asks = 0;

  if (n > CPUCYCLES_PMU_MAX) {
    errno = ENOSPC; /* setup says why: CPUCYCLES_PERF_REFUSAL_PMUS */
    return -1;
  }
  if (held_events > events_ceiling() - n) {
    errno = EMFILE;
    return -1;
  }
  for (i = 0; i < n; i++) {
    fds[i] = open_on_pmu(&core_pmus[i], config1);
    if (fds[i] < 0) {
      undo_opens(fds, pages, i);
      return -1;
    }
    fds[i] = move_high(fds[i], base, &asks);
    pages[i] = 0;
    if (map_page && !(pages[i] = map_page_of(fds[i]))) {
      undo_opens(fds, pages, i + 1);
      return -1;
    }
  }
  ev->fd = fds[0];
  ev->page = pages[0];
  ev->id = event_id(fds[0]);
  ev->asks = asks;
  ev->more = n - 1;
  for (i = 1; i < n; i++) {
    ev->more_fd[i - 1] = fds[i];
    ev->more_page[i - 1] = pages[i];
    ev->more_id[i - 1] = event_id(fds[i]);
  }
  if (link_event(ev) != 0) {
    ev->more = 0;
    ev->fd = -1;
    ev->page = 0;
    undo_opens(fds, pages, n);
    return -1;
  }
  ev->state = CPUCYCLES_PERF_OPEN_EACH_PMU;
  return 0;
}

static int open_locked(struct cpucycles_perf_event *ev, int map_page,
                       unsigned long long config1)
{
  void *page = 0;
  int fd, asks = 0;

  if (events_ever_linked) close_locked(ev);

  check_root_locked();
  if (core_pmus_found >= 2) return open_each_locked(ev, map_page, config1);

  /* The ceiling: one descriptor per thread is ours, but a program with
   * thousands of threads must keep its own descriptors.  Hold at most a
   * quarter of the soft RLIMIT_NOFILE (at least 16): past that, a thread
   * is refused its event (EMFILE) and reads the clock-based fallback. */
  if (held_events >= events_ceiling()) {
    errno = EMFILE;
    return -1;
  }

  fd = open_cycles(config1);
  if (fd < 0) return -1;
  fd = move_high(fd, high_base(), &asks);

  /* The process's first event: now that the kernel gives one, is the CPU
   * hybrid?  (Looked for here, not before, so that a machine without
   * user-space perf events never reads sysfs for it.) */
  if (core_pmus_found < 0) {
    find_core_pmus_locked();
    if (core_pmus_found >= 2) {
      close(fd);
      return open_each_locked(ev, map_page, config1);
    }
  }

  if (map_page && !(page = map_page_of(fd))) {
    close(fd);
    return -1;
  }

  ev->fd = fd;
  ev->page = page;
  ev->id = event_id(fd);
  ev->asks = asks;
  if (link_event(ev) != 0) {
    if (page) munmap(page, page_size());
    close(fd);
    ev->fd = -1;
    ev->page = 0;
    return -1;
  }
  ev->state = CPUCYCLES_PERF_OPEN;
  return 0;
}

int cpucycles_perf_core_pmus(void)
{
  int found;

  if (lock_registry() != 0) return -1;
  check_root_locked();
  found = core_pmus_found;
  unlock_registry();
  return found;
}

int cpucycles_perf_open(struct cpucycles_perf_event *ev, int map_page,
                        unsigned long long config1)
{
  int result;

  if (lock_registry() != 0) {
    errno = EDEADLK; /* a signal handler of a thread in the registry */
    return -1;
  }
  result = open_locked(ev, map_page, config1);
  unlock_registry();
  return result;
}

static int is_open(const struct cpucycles_perf_event *ev);
static void forget(struct cpucycles_perf_event *ev);

/* ev open, but in another process (its epoch is not this process's): a
 * child made without the fork handlers, above. */
static int inherited(const struct cpucycles_perf_event *ev)
{
  return is_open(ev) && ev->epoch != cpucycles_perf_current_epoch();
}

int cpucycles_perf_open_once(struct cpucycles_perf_event *ev, int map_page,
                             unsigned long long config1)
{
  if (inherited(ev)) {
    if (lock_registry() != 0) return 0; /* adopts the process: */
    if (inherited(ev)) forget(ev); /* ev dropped with the rest, not listed */
    unlock_registry();
  }
  if (ev->state != CPUCYCLES_PERF_UNOPENED) return 0;
  if (cpucycles_perf_open(ev, map_page, config1) == 0) return 1;
  /* (refused in a signal handler: tried again on a later read) */
  if (errno != EDEADLK) ev->state = CPUCYCLES_PERF_FALLBACK;
  return 0;
}

/* ---- closing ---- */

static int is_open(const struct cpucycles_perf_event *ev)
{
  return ev->state == CPUCYCLES_PERF_OPEN ||
         ev->state == CPUCYCLES_PERF_OPEN_EACH_PMU;
}

/* Event i of ev's (0: fd and page; then more_fd and more_page). */
static int *fd_of(struct cpucycles_perf_event *ev, int i)
{
  return i == 0 ? &ev->fd : &ev->more_fd[i - 1];
}

static volatile struct perf_event_mmap_page **page_of(
    struct cpucycles_perf_event *ev, int i)
{
  return i == 0 ? &ev->page : &ev->more_page[i - 1];
}

static unsigned long long *id_of(struct cpucycles_perf_event *ev, int i)
{
  return i == 0 ? &ev->id : &ev->more_id[i - 1];
}

/* Whether event i's descriptor is still the event's (above, "which
 * descriptors are still ours"); one ioctl, none without an id. */
static int is_ours(struct cpucycles_perf_event *ev, int i)
{
  unsigned long long id = *id_of(ev, i);
  if (*fd_of(ev, i) < 0) return 0;
  return id == 0 || event_id(*fd_of(ev, i)) == id;
}

/* Close every descriptor of an open ev that is still its own (not its
 * pages), and forget every number: fd -1. */
static void close_fds(struct cpucycles_perf_event *ev)
{
  int i;
  if (!is_open(ev)) return;
  for (i = 0; i <= ev->more; i++) {
    int *fd = fd_of(ev, i);
    if (is_ours(ev, i)) close(*fd);
    *fd = -1;
  }
}

static void forget(struct cpucycles_perf_event *ev)
{
  int i;
  ev->state = CPUCYCLES_PERF_UNOPENED;
  ev->fd = -1;
  ev->page = 0;
  ev->id = 0;
  ev->asks = 0;
  ev->epoch = 0;
  ev->fast = 0;
  ev->base = 0;
  ev->last = 0;
  for (i = 0; i < ev->more; i++) {
    ev->more_fd[i] = -1;
    ev->more_page[i] = 0;
    ev->more_id[i] = 0;
  }
  ev->more = 0;
}

static void close_locked(struct cpucycles_perf_event *ev)
{
  int i;

  unlink_event(ev);
  if (is_open(ev)) {
    for (i = 0; i <= ev->more; i++) {
      volatile struct perf_event_mmap_page **page = page_of(ev, i);
      if (*page) munmap((void *) *page, page_size());
      *page = 0;
    }
    close_fds(ev);
  }
  forget(ev);
}

void cpucycles_perf_close(struct cpucycles_perf_event *ev)
{
  /* No event was ever opened in the process: nothing to close, and the
   * thread-locals untouched (above, events_ever_linked). */
  if (!__atomic_load_n(&events_ever_linked, __ATOMIC_RELAXED)) return;
  /* Nothing open, nothing listed (a failed setup, a FALLBACK thread): no
   * other thread ever changes this thread's event, so no lock is needed. */
  if (!ev->linked && !is_open(ev)) {
    forget(ev);
    return;
  }
  if (lock_registry() != 0) return; /* left open, for a later close */
  close_locked(ev);
  unlock_registry();
}

/* ---- fork ---- */

void cpucycles_perf_fork_prepare(void)
{
  lock_registry_masked(&fork_saved_mask);
  cpucycles_fork_hold_take(&registry_for_fork);
}

void cpucycles_perf_fork_parent(void)
{
  cpucycles_fork_hold_drop(&registry_for_fork);
  unlock_registry_masked(&fork_saved_mask);
}

/* In the child, under registry: every descriptor on the list was copied
 * from the parent and counts one of its threads: close them all.  The
 * pages are not copied (Linux marks perf mappings VM_DONTCOPY), so their
 * addresses may already hold someone else's mapping (another fork
 * handler's), which munmap() would destroy: forget them.  The events of
 * the other threads live in their thread-local storage, which nobody in
 * the child will use again; the forking thread's become UNOPENED, so that
 * its next read opens the child's own event. */
static void drop_inherited_locked(void)
{
  struct cpucycles_perf_event *ev, *next;

  for (ev = all_events; ev; ev = next) {
    next = ev->all_next;
    close_fds(ev);
    ev->next = 0;
    ev->all_next = 0;
    ev->linked = 0;
    forget(ev);
  }
  all_events = 0;
  held_events = 0;
  if (!events_ever_linked) return;
  thread_events = 0;
  if (thread_key_state == 1) pthread_setspecific(thread_key, 0);
}

void cpucycles_perf_fork_child(void)
{
  drop_inherited_locked();
  if (epoch_page && __atomic_load_n(&epoch_page[0], __ATOMIC_RELAXED) == 0)
    next_epoch(); /* wiped: a child */
  cpucycles_fork_hold_drop(&registry_for_fork);
  unlock_registry_masked(&fork_saved_mask);
}

void cpucycles_perf_atfork_child(struct cpucycles_perf_event *ev)
{
  if (lock_registry() != 0) return;
  drop_inherited_locked();
  /* not on the list: a FALLBACK event, or one of a thread's own making */
  if (events_ever_linked) forget(ev);
  unlock_registry();
}

/* ---- unloading ----
 *
 * dlclose() of the library while events are open: the key's destructor
 * would point into unmapped code when a thread exits afterwards, and the
 * descriptors and the key would stay behind, one of each per dlopen and
 * dlclose.  So the key is deleted (no destructor runs for it any more)
 * and every descriptor closed.  The calling thread's events are closed
 * completely.  Another thread may still run (at exit(), destructors run
 * while the other threads do): its page stays mapped, which keeps its
 * event counting and its fast path reading it, and its descriptor is
 * closed and forgotten (fd -1), so that a slow-path read never reads a
 * reused descriptor: it takes the page's offset (lost_event()), or, with
 * no page, the fallback clock, since events opened afterwards are
 * refused. */
__attribute__((destructor)) static void unload(void)
{
  struct cpucycles_perf_event *ev, *next;
  sigset_t saved;

  lock_registry_masked(&saved);
  if (events_ever_linked)
    while (thread_events) close_locked(thread_events);
  for (ev = all_events; ev; ev = next) {
    next = ev->all_next;
    close_fds(ev);
    ev->next = 0;
    ev->all_next = 0;
    ev->linked = 0;
  }
  if (!all_events && epoch_page) {
    /* no other thread reads it: the epoch back in the plain static */
    __atomic_store_n(&plain_epoch, epoch_value, __ATOMIC_RELEASE);
    __atomic_store_n(&cpucycles_perf_epoch, &plain_epoch, __ATOMIC_RELEASE);
    munmap((void *) epoch_page, page_size());
    epoch_page = 0;
  }
  all_events = 0;
  held_events = 0;
  if (thread_key_state == 1) pthread_key_delete(thread_key);
  thread_key_state = -1;
  unlock_registry_masked(&saved);
}

/* ---- reading ---- */

/* read(2) of event i's 64-bit count: one system call where the
 * descriptor lives high (above, "which descriptors are still ours"), its
 * identity asked only when the read fails, or before it where the event
 * could not be moved, and with ask (a page counter's read(2), its slow
 * path: the number may hold the program's dup2()).  Returns 0 with the count in *out; -1 when read(2)
 * fails on the event (errno set); 1, with errno EBADF and the number left
 * alone, when it is no longer the event's (or was forgotten). */
static int read_event(struct cpucycles_perf_event *ev, int i, long long *out,
                      int ask)
{
  int fd = *fd_of(ev, i);
  ssize_t n;

  if (fd >= 0 && !((ask || ev->asks) && !is_ours(ev, i))) {
    n = read(fd, out, sizeof *out);
    if (n == (ssize_t) sizeof *out) return 0;
    if (n >= 0) errno = EIO;
    if (errno != EBADF && is_ours(ev, i)) return -1;
  }
  errno = EBADF;
  return 1;
}

static long long fallback_persecond = 1000000000LL;
static long long fallback_base_sec;
void cpucycles_perf_set_persecond(long long persecond)
{
  struct timespec t;

  if (persecond <= 0) return;
  cpucycles_osclock_setup();
  if (cpucycles_perf_ops.clock(CLOCK_MONOTONIC, &t) == 0)
    __atomic_store_n(&fallback_base_sec, (long long) t.tv_sec, __ATOMIC_RELAXED);
  __atomic_store_n(&fallback_persecond, persecond, __ATOMIC_RELEASE);
}

long long cpucycles_perf_fallback(void)
{
  long long persecond = __atomic_load_n(&fallback_persecond, __ATOMIC_ACQUIRE);
  unsigned long long seconds;
  struct timespec t;

  if (cpucycles_perf_ops.clock(CLOCK_MONOTONIC, &t) != 0) return 0;
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

/* The sum of ev's events, one per core PMU (one event: its count).
 * Returns 0 and the sum in *out, else what read_event() said of the
 * descriptor that did not answer (-1, or 1: no longer the event's). */
static int read_each(struct cpucycles_perf_event *ev,
                     cpucycles_perf_rdpmc_fn rdpmc, long long *out)
{
  unsigned long long sum = 0;
  long long count;
  int i, r;

  for (i = 0; i <= ev->more; i++) {
    const volatile struct perf_event_mmap_page *page = *page_of(ev, i);
    /* Off the hardware (index 0: on a hybrid CPU, the events of the
     * other core types), an event's count is its page's offset. */
    if (!(rdpmc && page && cpucycles_perf_page_count(page, rdpmc, &count, 1) == 0) &&
        (r = read_event(ev, i, &count, rdpmc != 0)) != 0)
      return r;
    sum += (unsigned long long) count;
  }
  *out = (long long) sum;
  return 0;
}

/* ---- a new event must count ---- */

/* Some user-mode work between two reads, which a working cycles event
 * counts: the compiler may not drop it. */
static void spin(void)
{
  volatile unsigned int i;
  for (i = 0; i < 1000; i++) { }
}

/* The read(2) of ev's newly opened events, which must count.  Some
 * kernels (seen on AWS Graviton 3) hand out a cycles event whose read(2)
 * stays at 0 until the event has been disabled and enabled again, and
 * this holds for every event opened, not only the first: the probe's,
 * each thread's own, each core PMU's on a hybrid CPU.  So each event whose
 * count is 0 is read again after some work; each still at 0 is disabled,
 * reset and enabled, and read once more.  An event that counts from the
 * start gets no ioctl and no second read.  The cost is capped: at most
 * three read(2) and three ioctl(2) per event and two spins of 1000 loop
 * iterations in all.  (On a hybrid CPU the events of the core types the
 * thread is not running on stay at 0 whatever is done: they get the
 * remedy too, which changes nothing for them.)  Returns 0 with the sum of
 * the counts in *out, -1 when a read fails (errno set), 1 when the sum is
 * still 0. */
static int read_counting(struct cpucycles_perf_event *ev, long long *out)
{
  static const unsigned long remedy[3] = {
    PERF_EVENT_IOC_DISABLE, PERF_EVENT_IOC_RESET, PERF_EVENT_IOC_ENABLE
  };
  long long count[CPUCYCLES_PMU_MAX];
  unsigned long long sum = 0;
  /* n once: every loop below covers the same events, all read first */
  int i, r, round, zeros = 0, n = ev->more + 1;

  if (n < 1 || n > CPUCYCLES_PMU_MAX) return -1;
  for (i = 0; i < n; i++) {
    if (read_event(ev, i, &count[i], 0) != 0) return -1;
    if (count[i] == 0) zeros++;
  }
  for (round = 0; round < 2 && zeros > 0; round++) {
    if (round == 1) {
      for (i = 0; i < n; i++)
        if (count[i] == 0 && !is_ours(ev, i)) return -1;
      for (r = 0; r < 3; r++)
        for (i = 0; i < n; i++)
          if (count[i] == 0) cpucycles_perf_ops.ioctl(*fd_of(ev, i), remedy[r], 0);
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

/* The last value a thread's read(2) of its event gave, with the base that
 * keeps it going after the event was replaced (lost_event()). */
static long long read_value(struct cpucycles_perf_event *ev, long long count)
{
  ev->last = (long long) ((unsigned long long) count + (unsigned long long) ev->base);
  return ev->last;
}

/* A thread's read from now on: the clock, so that its values stay in one
 * unit. */
static long long give_up(struct cpucycles_perf_event *ev)
{
  cpucycles_perf_close(ev);
  if (!ev->linked) ev->state = CPUCYCLES_PERF_FALLBACK; /* (else: closed later) */
  return cpucycles_perf_fallback();
}

/* One of ev's descriptors is no longer the event's: the program closed it
 * (close_range, closefrom, a loop of close) and may have opened a file of
 * its own at that number.  The numbers that are no longer ours are
 * forgotten, never read, written or closed again.  Then the thread gets a
 * working counter back without them:
 * - with a page (rdpmc): the mapping holds the event, which goes on
 *   counting and is read through the page as before; off the hardware
 *   (index 0), where read(2) was used, its count is the page's offset, as
 *   <linux/perf_event.h> prescribes;
 * - default-perfevent (read(2) only): a new event, whose counts continue
 *   from the last value read (ev->base), so that they never go back; the
 *   cycles between that read and the new event's first are not counted.
 * Where neither works, the fallback clock. */
static long long lost_event(struct cpucycles_perf_event *ev,
                            cpucycles_perf_rdpmc_fn rdpmc,
                            unsigned long long config1)
{
  long long count, last;
  int i;

  for (i = 0; i <= ev->more; i++)
    if (!is_ours(ev, i)) *fd_of(ev, i) = -1;
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
    /* A thread's own event, just opened: its first read(2) must count,
     * with the remedy for a count stuck at 0 where needed; one still at 0
     * leaves the thread on the clock. */
    if (read_counting(ev, &count) == 0) return read_value(ev, count);
    return give_up(ev);
  }
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
  /* A descriptor of ours stopped answering. */
  return give_up(ev);
}

/* ---- setup ---- */

int cpucycles_perf_setup(struct cpucycles_perf_event *ev,
                         cpucycles_perf_rdpmc_fn rdpmc,
                         unsigned long long config1,
                         struct counter_info *info)
{
  long long count;
  int i;

  if (cpucycles_perf_open(ev, rdpmc != 0, config1) != 0) {
    if (errno == ENOSPC && cpucycles_perf_core_pmus() > CPUCYCLES_PMU_MAX)
      return counter_refuse(info, CPUCYCLES_PERF_REFUSAL_PMUS, 0);
    return counter_refuse(info, CPUCYCLES_REFUSAL_PERF_OPEN, errno);
  }
  if (rdpmc) {
    /* Without user reads (x86: sysfs rdpmc 0; arm64: perf_user_access 0;
     * RISC-V: perf_user_access 0; or a hypervisor that does not offer
     * them) every read would be a read(2): default-perfevent's job.  On
     * a hybrid CPU, every core PMU's event must offer them. */
    for (i = 0; i <= ev->more; i++)
      if (!(*page_of(ev, i))->cap_user_rdpmc) {
        cpucycles_perf_close(ev);
        return counter_refuse(info, CPUCYCLES_REFUSAL_NO_USER_RDPMC, 0);
      }
    /* The instruction is not tried here: nothing catches its fault
     * (a hypervisor may trap it though the page offers it): the reads
     * may fault, and the probe tries them with crash signals caught
     * (counter.h, may_fault).  An event off the hardware (index 0) must
     * answer read(2), which its reads then use. */
    if (ev->state == CPUCYCLES_PERF_OPEN && ev->page->index == 0 &&
        read_event(ev, 0, &count, 1) != 0) {
      int err = errno;
      cpucycles_perf_close(ev);
      return counter_refuse(info, CPUCYCLES_REFUSAL_PERF_READ, err);
    }
    info->may_fault = 1;
  } else {
    int r = read_counting(ev, &count);
    if (r != 0) {
      int err = errno;
      cpucycles_perf_close(ev);
      if (r > 0) return counter_refuse(info, CPUCYCLES_PERF_REFUSAL_STUCK, 0);
      return counter_refuse(info, CPUCYCLES_REFUSAL_PERF_READ, err);
    }
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
