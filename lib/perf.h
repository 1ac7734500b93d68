/* perf.h: what the perf_event counters share (doc/perf-counters.md).  An
 * event opened with pid 0, cpu -1 counts the calling thread only, so each
 * counter keeps a struct cpucycles_perf_event per thread (static __thread:
 * doc/security.md, "Static TLS"), opened on the thread's first read and
 * closed at thread exit and in a fork child (perf-registry.c).
 * The counters differ only in the instruction that reads the counter the
 * page names and in attr.config1 (arm64). */
#ifndef CPUCYCLES_PERF_H
#define CPUCYCLES_PERF_H

/* The perf files include this first (the RV32 check compiles them with
 * no config.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#if defined(__linux__) && defined(__has_include)
#if __has_include(<linux/perf_event.h>)
#define CPUCYCLES_PERF_AVAILABLE 1
#endif
#endif

#ifdef CPUCYCLES_PERF_AVAILABLE

#include <sys/types.h>
#include <time.h>
#include <linux/perf_event.h>

#include "pmu.h"

/* The process's epoch, in a page that a child made without the fork
 * handlers sees zero-filled (perf-registry.c, "Epochs"): an event whose
 * epoch differs takes no hot path. */
extern const volatile unsigned int *cpucycles_perf_epoch
  __attribute__((visibility("hidden")));

/* Two relaxed loads (plain loads on every ISA). */
static inline unsigned int cpucycles_perf_current_epoch(void)
{
  return __atomic_load_n(__atomic_load_n(&cpucycles_perf_epoch, __ATOMIC_RELAXED),
                         __ATOMIC_RELAXED);
}

enum {
  CPUCYCLES_PERF_UNOPENED = 0, /* not tried in this thread (or dropped) */
  CPUCYCLES_PERF_OPEN,         /* fd (and page, when asked for) are ours */
  CPUCYCLES_PERF_FALLBACK,     /* refused: reads answer the fallback */
  CPUCYCLES_PERF_OPEN_EACH_PMU /* a hybrid CPU: one event per core PMU
                                  (fd/page, more_fd/more_page), summed */
};

/* One thread's event; all zero is UNOPENED, so a static __thread needs no
 * initialiser. */
struct cpucycles_perf_event {
  int state;
  int fd;
  volatile struct perf_event_mmap_page *page; /* 0 unless mapped */
  struct cpucycles_perf_event *next;          /* the thread's open events */
  struct cpucycles_perf_event *all_next;      /* every thread's */
  int linked;                                 /* on those lists */
  int fast;           /* the counter's note that its hot path may be taken;
                         cleared whenever the event is closed or dropped */
  unsigned int epoch; /* the process's that opened it */
  int more;           /* OPEN_EACH_PMU: the events beyond the first */
  int more_fd[CPUCYCLES_PMU_MAX - 1];
  volatile struct perf_event_mmap_page *more_page[CPUCYCLES_PMU_MAX - 1];
  /* the kernel's event ids (0: none), checked on the slow paths, so that a
   * number the program closed and reused is left alone (perf-event.c) */
  unsigned long long id;
  unsigned long long more_id[CPUCYCLES_PMU_MAX - 1];
  int asks;  /* a descriptor stayed low: identity asked before each read */
  long long last; /* read(2) only: the last value read, and the base that */
  long long base; /* keeps the values growing across a replaced event */
};

/* A counter's user-space read of hardware counter `counter` (the page's
 * index - 1): rdpmc in its ISA's form. */
typedef unsigned long long (*cpucycles_perf_rdpmc_fn)(unsigned int counter);

/* The system as the perf code sees it: perf_event_open(2), ioctl(2) on an
 * event, the fallback's clock, and the root of /sys ("": the real one; the
 * PMUs are looked for again when the pointer changes).  One const table,
 * lib/perf-sys.c; test builds link tests/seams.c in its place. */
struct cpucycles_perf_ops {
  int (*open)(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
              unsigned long flags);
  int (*ioctl)(int fd, unsigned long request, void *arg);
  int (*clock)(clockid_t clock, struct timespec *t);
  const char *(*sysfs_root)(void);
};
extern const struct cpucycles_perf_ops cpucycles_perf_ops
  __attribute__((visibility("hidden")));

/* Open a cycles event for the calling thread into ev, closing what ev
 * held: close-on-exec, attr.config1 = config1, its page mapped with
 * map_page, registered for closing; on a hybrid CPU one per core PMU, all
 * or none (OPEN_EACH_PMU; ENOSPC beyond CPUCYCLES_PMU_MAX).  0, or -1 with
 * ev UNOPENED; EMFILE, with no system call, past the process's ceiling. */
int cpucycles_perf_open(struct cpucycles_perf_event *ev, int map_page,
                        unsigned long long config1);

/* A thread's first use of ev: open it, or make it FALLBACK if refused, so
 * the open is tried once per thread.  1 when this call opened ev. */
int cpucycles_perf_open_once(struct cpucycles_perf_event *ev, int map_page,
                             unsigned long long config1);

/* Unmap, close, forget: UNOPENED.  Safe on any event. */
void cpucycles_perf_close(struct cpucycles_perf_event *ev);

struct counter_info;

/* A thread touches its thread-local events (glibc may allocate them on the
 * first touch: doc/security.md, "Static TLS") only where an event opens:
 * a setup asks first, with no event, outside the registry's lock (under
 * the first call's); a release closes only once one was ever linked. */
int cpucycles_perf_can_open(struct counter_info *info, unsigned long long config1);
int cpucycles_perf_ever_linked(void);

/* The library's fork handlers' part: prepare holds the registry across
 * fork(), so that the child can close every inherited descriptor and
 * forget the pages (VM_DONTCOPY). */
void cpucycles_perf_fork_prepare(void);
void cpucycles_perf_fork_parent(void);
void cpucycles_perf_fork_child(void);

/* A counter's atfork_child: the same, and ev UNOPENED. */
void cpucycles_perf_atfork_child(struct cpucycles_perf_event *ev);

/* A thread without an event: CLOCK_MONOTONIC since the second of the
 * process's first fallback read, scaled by the estimate set_persecond
 * stores (which reads no clock): monotone, in the other threads' unit,
 * no overflow. */
long long cpucycles_perf_fallback(void);
void cpucycles_perf_set_persecond(long long persecond);

#define CPUCYCLES_PERF_REFUSAL_STUCK \
  "perf event count stuck at 0, also after disable and enable"
#define CPUCYCLES_PERF_REFUSAL_PMUS \
  "more core PMUs than the perf counters open events on"
#define CPUCYCLES_PERF_REFUSAL_HYBRID \
  "a hybrid CPU: the fixed counter counts one core type only"

/* How many core PMUs the process's first successful open found (-1
 * before it), the first max copied to pmus (may be NULL): cpucycles-info
 * reports these rather than looking again. */
int cpucycles_perf_core_pmus(struct cpucycles_pmu *pmus, int max);

/* The slow path of cpucycles_perf_read_fast(): opens the thread's event
 * on its first read (mapped with rdpmc), then reads the page with rdpmc,
 * else read(2); rdpmc 0 (default-perfevent): read(2) only, and a new
 * event must count, as in setup.  OPEN_EACH_PMU: the sum of the events
 * (each only grows, so the sum too).  A lost descriptor: perf.c. */
long long cpucycles_perf_read(struct cpucycles_perf_event *ev,
                              cpucycles_perf_rdpmc_fn rdpmc,
                              unsigned long long config1);

/* A perf counter's setup, in the probe thread: open ev (mapped with rdpmc)
 * or refuse.  With rdpmc, refuse a page without cap_user_rdpmc, never run
 * rdpmc (a hypervisor may trap it): on-core, may_fault.  Without, the
 * event's read(2) must count (CPUCYCLES_PERF_REFUSAL_STUCK). */
int cpucycles_perf_setup(struct cpucycles_perf_event *ev,
                         cpucycles_perf_rdpmc_fn rdpmc,
                         unsigned long long config1,
                         struct counter_info *info);

/* The count from a self-monitoring page, as <linux/perf_event.h>
 * prescribes: offset + rdpmc(index - 1) sign-extended from pmc_width,
 * retried while `lock` changes.  0 with *out; -1 without user reads
 * (cap_user_rdpmc 0, a bad width) or at index 0 (not on a counter now)
 * unless index0_counts (the count is then the offset).  Inline, so that a
 * counter's rdpmc and a constant index0_counts compile to the
 * instruction, no call, no dead branch. */
static inline int cpucycles_perf_page_count(
    const volatile struct perf_event_mmap_page *pg,
    cpucycles_perf_rdpmc_fn rdpmc, long long *out, int index0_counts)
{
  unsigned int seq, index, width;
  unsigned long long offset, pmc;

  do {
    seq = pg->lock;
    /* the kernel updates it from this thread's CPU: a compiler barrier */
    __asm__ __volatile__("" ::: "memory");
    index = pg->index;
    offset = (unsigned long long) pg->offset;
    if (!pg->cap_user_rdpmc || index == 0) {
      if (!index0_counts || !pg->cap_user_rdpmc) return -1;
      width = 64;
      pmc = 0;
    } else {
      width = pg->pmc_width;
      if (width == 0 || width > 64) return -1;
      pmc = rdpmc(index - 1);
    }
    __asm__ __volatile__("" ::: "memory");
  } while (pg->lock != seq);

  /* the kernel starts the counter negative: sign-extend, add (unsigned) */
  pmc <<= 64 - width;
  pmc = (unsigned long long) ((long long) pmc >> (64 - width));
  *out = (long long) (offset + pmc);
  return 0;
}

/* The page read of a thread's one event: -1 at index 0. */
static inline int cpucycles_perf_page_read(
    const volatile struct perf_event_mmap_page *pg,
    cpucycles_perf_rdpmc_fn rdpmc, long long *out)
{
  return cpucycles_perf_page_count(pg, rdpmc, out, 0);
}

/* The hot path of the page-reading counters, inlined into each with its
 * TLS event and its rdpmc: one state and epoch test, the page loop, the
 * instruction; anything else (a hybrid CPU's events too) the slow path. */
static inline long long cpucycles_perf_read_fast(
    struct cpucycles_perf_event *ev, cpucycles_perf_rdpmc_fn rdpmc,
    unsigned long long config1)
{
  long long count;
  if (__builtin_expect(ev->state == CPUCYCLES_PERF_OPEN &&
                       ev->epoch == cpucycles_perf_current_epoch(), 1) &&
      cpucycles_perf_page_read(ev->page, rdpmc, &count) == 0)
    return count;
  return cpucycles_perf_read(ev, rdpmc, config1);
}

#endif /* CPUCYCLES_PERF_AVAILABLE */

#endif
