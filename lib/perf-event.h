/* perf-event.h: the perf code's lowest layer, which every layer above
 * includes: the event's fields, the epoch, the system table, the page's
 * read, and an event's open, identity and close (perf-event.c), which
 * know nothing of the registry (perf-registry.h) or of the read path
 * (perf.h) above them (doc/perf-counters.md, "How the code is shared";
 * tests/perf-layers.sh). */
#ifndef CPUCYCLES_PERF_EVENT_H
#define CPUCYCLES_PERF_EVENT_H

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
#include <unistd.h>

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
 * initialiser.  The perf counters share one per thread (perf.h): kind
 * says which of them can read it. */
struct cpucycles_perf_event {
  int state;
  int fd;
  volatile struct perf_event_mmap_page *page; /* 0 unless mapped */
  struct cpucycles_perf_event *next;          /* the thread's open events */
  struct cpucycles_perf_event *all_next;      /* every thread's */
  int linked;                                 /* on those lists */
  unsigned int epoch; /* the process's that opened it */
  int more;           /* OPEN_EACH_PMU: the events beyond the first */
  int more_fd[CPUCYCLES_PMU_MAX - 1];
  int timed; /* seen_at holds the clock of the last read through perf.c */
  volatile struct perf_event_mmap_page *more_page[CPUCYCLES_PMU_MAX - 1];
  /* the kernel's event ids (0: none), asked before each read(2) and each
   * close, so that a number the program closed and reused is left alone
   * (perf-event.c) */
  unsigned long long id;
  unsigned long long more_id[CPUCYCLES_PMU_MAX - 1];
  unsigned long long kind; /* cpucycles_perf_kind() it was last opened
                              (or refused) as; kept when closed */
  /* What keeps a thread's values growing (perf.c, value_of): every read
   * returns the count plus base; seen and seen_at are the count and the
   * fallback clock of the last read through perf.c. */
  long long base, seen, seen_at;
};

/* What an event is opened as: attr.config1 (arm64 uses bits 0 and 1) and
 * whether its page is mapped. */
static inline unsigned long long cpucycles_perf_kind(int map_page,
                                                     unsigned long long config1)
{
  return config1 << 1 | (map_page != 0);
}

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

/* The count from a self-monitoring page, as <linux/perf_event.h>
 * prescribes: offset + rdpmc(index - 1) sign-extended from pmc_width,
 * retried while `lock` changes, every field read again at each read (the
 * kernel moves an event between counters, takes it off them, may stop
 * offering user reads).  0 with *out; -1 without user reads
 * (cap_user_rdpmc 0, a bad width), anywhere but at index `only` (when
 * not 0: the counter the caller reads), or at index 0 (not on a counter
 * now) unless index0_counts: then 1, the count being the offset.
 * Inline, so that a counter's rdpmc and constant arguments compile to the
 * instruction, no call, no dead branch. */
static inline int cpucycles_perf_page_count(
    const volatile struct perf_event_mmap_page *pg,
    cpucycles_perf_rdpmc_fn rdpmc, long long *out, int index0_counts,
    unsigned int only)
{
  unsigned int seq, index, width;
  unsigned long long offset, pmc;

  do {
    seq = pg->lock;
    /* the kernel updates it from this thread's CPU: a compiler barrier */
    __asm__ __volatile__("" ::: "memory");
    index = pg->index;
    offset = (unsigned long long) pg->offset;
    if (!pg->cap_user_rdpmc || (only && index != only)) return -1;
    if (index == 0) {
      if (!index0_counts) return -1;
      width = 64;
      pmc = 0;
    } else {
      width = pg->pmc_width;
      if (width == 0 || width > 64) return -1;
      pmc = rdpmc((only ? only : index) - 1); /* (a constant: no wait) */
    }
    __asm__ __volatile__("" ::: "memory");
  } while (pg->lock != seq);

  /* the kernel starts the counter negative: sign-extend, add (unsigned) */
  pmc <<= 64 - width;
  pmc = (unsigned long long) ((long long) pmc >> (64 - width));
  *out = (long long) (offset + pmc);
  return index == 0;
}

/* The page read of a thread's one event: -1 at index 0. */
static inline int cpucycles_perf_page_read(
    const volatile struct perf_event_mmap_page *pg,
    cpucycles_perf_rdpmc_fn rdpmc, long long *out)
{
  return cpucycles_perf_page_count(pg, rdpmc, out, 0, 0);
}

static inline int cpucycles_perf_is_open(const struct cpucycles_perf_event *ev)
{
  return ev->state == CPUCYCLES_PERF_OPEN ||
         ev->state == CPUCYCLES_PERF_OPEN_EACH_PMU;
}

/* Event i of ev's: 0 is fd and page, then more_fd and more_page. */
static inline int *cpucycles_perf_fd_of(struct cpucycles_perf_event *ev, int i)
{
  return i == 0 ? &ev->fd : &ev->more_fd[i - 1];
}

static inline volatile struct perf_event_mmap_page **cpucycles_perf_page_of(
    struct cpucycles_perf_event *ev, int i)
{
  return i == 0 ? &ev->page : &ev->more_page[i - 1];
}

static inline size_t cpucycles_perf_page_size(void)
{
  long size = sysconf(_SC_PAGESIZE);
  return size > 0 ? (size_t) size : 4096;
}

/* perf-event.c, serialised by the callers.  Open ev (UNOPENED) for the
 * calling thread: close-on-exec, attr.config1 = config1, its page mapped
 * with map_page; on a hybrid CPU one per core PMU (OPEN_EACH_PMU; ENOSPC
 * beyond CPUCYCLES_PMU_MAX); EMFILE where the process's `held`
 * descriptors and these would pass a quarter of its soft RLIMIT_NOFILE.
 * 0, or -1. */
int cpucycles_perf_event_open(struct cpucycles_perf_event *ev, int map_page,
                              unsigned long long config1, long held);
struct counter_info;
/* A thread touches its thread-local event (glibc may allocate it on the
 * first touch: doc/security.md, "Static TLS") only where an event opens:
 * a setup asks first, with no event and no lock (under the first call's);
 * the event_open that follows takes that descriptor or closes it. */
int cpucycles_perf_can_open(struct counter_info *info, unsigned long long config1);
/* Unmap, close what is still its own, forget: UNOPENED. */
void cpucycles_perf_event_close(struct cpucycles_perf_event *ev);
/* The core PMUs the first open found: cpucycles_perf_core_pmus(). */
int cpucycles_perf_event_pmus(struct cpucycles_pmu *pmus, int max);
/* Close each descriptor of an open ev that is still its own; fd -1. */
void cpucycles_perf_close_fds(struct cpucycles_perf_event *ev);
/* ev UNOPENED, every field but the lists' cleared. */
void cpucycles_perf_forget(struct cpucycles_perf_event *ev);
/* Whether event i's descriptor is still the event's: one ioctl, none
 * where the kernel gave no id. */
int cpucycles_perf_is_ours(struct cpucycles_perf_event *ev, int i);

#endif /* CPUCYCLES_PERF_AVAILABLE */

#endif
