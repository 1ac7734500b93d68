/* perf.h: what the perf_event counters (amd64-perfpmc, amd64-perfpmcff,
 * arm64-perfpmc, riscv32/64-perfrdcycle, default-perfevent) share.  See
 * doc/perf-counters.md.
 *
 * A perf cycles event opened with perf_event_open(pid 0, cpu -1) counts the
 * calling thread only, and its self-monitoring page describes the hardware
 * counter of that thread only.  So an event belongs to one thread: each
 * counter keeps one struct cpucycles_perf_event per thread (static __thread,
 * in the model configure chose: TLS descriptors where the compiler has
 * them, which take nothing of glibc's static TLS reserve; see
 * doc/security.md, "Static TLS"), opens it lazily
 * on the thread's first read, and the helpers here close it when the thread
 * exits (a pthread key destructor), close every thread's in a child after
 * fork() (a process-wide list of open events) and close them all when the
 * library is unloaded.
 *
 * The counters differ only in how user space reads the hardware counter
 * that the page names (rdpmc on x86, mrs of a PMU register on arm64, csrr
 * of a counter CSR on RISC-V) and in the attr.config1 the kernel wants
 * before it allows that read (arm64).  Each counter file owns its thread
 * state and its read instruction and passes both here: everything else
 * (opening, the slow path, setup, closing) is written once, below and in
 * perf*.c (perf-internal.h).
 *
 * Internal to the library: every name starts with cpucycles_perf_ and none
 * is exported from the shared library. */
#ifndef CPUCYCLES_PERF_H
#define CPUCYCLES_PERF_H

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

/* The epoch of this process (lib/perf-registry.c, "Epochs"): in a page that a child made without the fork handlers
 * (_Fork()) sees zero-filled, so that an event it inherited, whose epoch
 * is its parent's, never takes a hot path there.  0 before the process's
 * first event. */
extern const volatile unsigned int *cpucycles_perf_epoch
  __attribute__((visibility("hidden")));

/* The current epoch, for the hot paths: two relaxed loads (plain loads
 * on every ISA; atomic, because another thread may set the epoch). */
static inline unsigned int cpucycles_perf_current_epoch(void)
{
  return __atomic_load_n(__atomic_load_n(&cpucycles_perf_epoch, __ATOMIC_RELAXED),
                         __ATOMIC_RELAXED);
}

/* Where a thread's event stands. */
enum {
  CPUCYCLES_PERF_UNOPENED = 0, /* not tried yet in this thread (or dropped) */
  CPUCYCLES_PERF_OPEN,         /* fd (and page, when asked for) are ours */
  CPUCYCLES_PERF_FALLBACK,     /* the kernel refused this thread an event:
                                  reads answer cpucycles_perf_fallback() */
  CPUCYCLES_PERF_OPEN_EACH_PMU /* a hybrid CPU: fd/page and more_fd/
                                  more_page, one event per core PMU; a
                                  read is their sum */
};

/* One thread's event.  All zero means "not opened yet", so that a
 * static __thread instance needs no initialiser: the fd is meaningful only
 * in state OPEN or OPEN_EACH_PMU. */
struct cpucycles_perf_event {
  int state;
  int fd;
  volatile struct perf_event_mmap_page *page; /* 0 unless mapped */
  struct cpucycles_perf_event *next;          /* the thread's open events */
  struct cpucycles_perf_event *all_next;      /* every thread's open events */
  int linked;                                 /* on those lists */
  int fast;   /* the counter's own note that its hot path may be taken;
                 cleared whenever the event is closed or dropped */
  unsigned int epoch; /* the process's that opened it: the hot paths run
                         only while it is *cpucycles_perf_epoch */
  /* OPEN_EACH_PMU: the events on the second and further core PMUs (the
   * first is fd and page); more is their number, 0 otherwise. */
  int more;
  int more_fd[CPUCYCLES_PMU_MAX - 1];
  volatile struct perf_event_mmap_page *more_page[CPUCYCLES_PMU_MAX - 1];
  /* Each event's kernel id (PERF_EVENT_IOC_ID; 0: none given), asked of
   * its descriptor on the slow paths (perf-event.c): a descriptor the program
   * closed, or whose number now holds a file of the program's, is left
   * alone. */
  unsigned long long id;
  unsigned long long more_id[CPUCYCLES_PMU_MAX - 1];
  int asks; /* a descriptor stayed low: its identity asked before each read */
  /* read(2) only (default-perfevent): the last value read, and what is
   * added to the count of an event that replaced one whose descriptor the
   * program closed, so that the thread's values go on growing. */
  long long last;
  long long base;
};

/* How a counter reads hardware counter number `counter` (the page's
 * index - 1) from user space: its rdpmc, in whatever form its ISA has. */
typedef unsigned long long (*cpucycles_perf_rdpmc_fn)(unsigned int counter);

/* The system as the perf code sees it: perf_event_open(2), ioctl(2) on an
 * event (PERF_EVENT_IOC_DISABLE, _RESET, _ENABLE with arg 0; _ID with an
 * unsigned long long *), the clock cpucycles_perf_fallback() reads, and the
 * root under which /sys is looked at ("": the real one; the PMUs are looked
 * for again whenever the pointer returned changes).  One const table, in
 * lib/perf-sys.c; test builds link tests/perf-seams.c in its place. */
struct cpucycles_perf_ops {
  int (*open)(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
              unsigned long flags);
  int (*ioctl)(int fd, unsigned long request, void *arg);
  int (*clock)(clockid_t clock, struct timespec *t);
  const char *(*sysfs_root)(void);
};
extern const struct cpucycles_perf_ops cpucycles_perf_ops
  __attribute__((visibility("hidden")));

/* Open a cycles event for the calling thread into ev (closing whatever ev
 * held): PERF_COUNT_HW_CPU_CYCLES, user mode only (or, when the
 * kernel refuses that combination with EINVAL or EOPNOTSUPP, with the
 * hypervisor, the kernel, or both: doc/perf-counters.md), pid 0, cpu -1,
 * close-on-exec, with attr.config1 = config1 (0 but on arm64, whose kernel
 * grants user-space reads only to events that ask for them there).  With
 * map_page, also map its self-monitoring page.  Registers ev for closing
 * at thread exit.  Returns 0, or -1 with ev UNOPENED and nothing left
 * open; -1 with EMFILE, without a system call, when the process's events
 * already number a quarter of the soft RLIMIT_NOFILE (at least 16).
 *
 * The first open that succeeds in the process also looks for the core
 * PMUs (pmu.h).  Where there are two or more (a hybrid CPU), a plain
 * cycles event would count on one core type only, so each open makes
 * ev OPEN_EACH_PMU instead: one event per core PMU, each with the
 * extended hardware type (config PERF_COUNT_HW_CPU_CYCLES | type << 32),
 * or, where the kernel refuses that, the PMU's own cycles event from
 * sysfs; -1 unless every core PMU gives one, or (errno ENOSPC) when there
 * are more than CPUCYCLES_PMU_MAX core PMUs. */
int cpucycles_perf_open(struct cpucycles_perf_event *ev, int map_page,
                        unsigned long long config1);

/* A thread's first use of ev: when ev is UNOPENED, open it (as
 * cpucycles_perf_open), or make it FALLBACK if the kernel refuses, so that
 * the open is tried once per thread, not on every read.  Returns 1 when
 * this call opened ev, else 0. */
int cpucycles_perf_open_once(struct cpucycles_perf_event *ev, int map_page,
                             unsigned long long config1);

/* Unmap, close, forget: ev becomes UNOPENED.  Safe on an event that is
 * already closed or was never opened. */
void cpucycles_perf_close(struct cpucycles_perf_event *ev);

/* fork handlers, called by the library's own (cpucycles.c): prepare holds
 * the list of open events across fork(), so that every descriptor the
 * child inherits is on it; parent releases it; child closes every
 * inherited descriptor, of every thread of the parent (they count the
 * parent's threads), forgets the pages (Linux does not copy perf mappings
 * into a child: VM_DONTCOPY), and releases the list. */
void cpucycles_perf_fork_prepare(void);
void cpucycles_perf_fork_parent(void);
void cpucycles_perf_fork_child(void);

/* A perf counter's atfork_child: in the child after fork(), what
 * cpucycles_perf_fork_child() does (a second time is harmless), and ev
 * becomes UNOPENED, so that the next read opens the child's own event. */
void cpucycles_perf_atfork_child(struct cpucycles_perf_event *ev);

/* What a thread without an event reads: CLOCK_MONOTONIC since the second
 * it stood at when cpucycles_perf_set_persecond() was called, scaled to
 * cycles by the CPU frequency estimate given there (nanoseconds until
 * then).  Monotone and in the same unit as the other threads' counts,
 * though only as precise as the clock; no overflow whatever the clock's
 * offset (time namespaces). */
long long cpucycles_perf_fallback(void);

/* The CPU frequency estimate for cpucycles_perf_fallback(), and its base
 * second; the library sets it once, before the probe. */
void cpucycles_perf_set_persecond(long long persecond);

/* setup's refusal of an event whose read(2) stays at 0. */
#define CPUCYCLES_PERF_REFUSAL_STUCK \
  "perf event count stuck at 0, also after disable and enable"

/* setup's refusal on a CPU with more core PMUs than a thread opens
 * events on. */
#define CPUCYCLES_PERF_REFUSAL_PMUS \
  "more core PMUs than the perf counters open events on"

/* amd64-perfpmcff's refusal on a hybrid CPU. */
#define CPUCYCLES_PERF_REFUSAL_HYBRID \
  "a hybrid CPU: the fixed counter counts one core type only"

/* How many core PMUs the process's first successful open found (more
 * than CPUCYCLES_PMU_MAX included): the number of events a thread opens
 * is this when it is 2 or more, else 1.  -1 before that open. */
int cpucycles_perf_core_pmus(void);

struct counter_info;

/* The complete read of a per-thread perf counter, fast or not: opens the
 * thread's event on its first read (cpucycles_perf_open_once, mapping the
 * page when rdpmc is given), then reads it through the page with rdpmc,
 * else with read(2); a descriptor that stops answering is closed and the
 * thread reads cpucycles_perf_fallback() from then on, so that its values
 * stay in one unit.  With rdpmc 0 (default-perfevent) there is no page:
 * read(2) only, and an event just opened must count, as in setup: each
 * of its events whose count stays at 0 is disabled, reset and enabled
 * once; a sum still 0 leaves the thread on the fallback.  Every
 * descriptor is asked for its event's id before it is used; one that is
 * no longer the event's (the program closed it, and perhaps opened a file
 * at its number) is never touched again, and the thread reads on through
 * its page (index 0: the page's offset), or, without a page, through a new
 * event whose counts continue from the last value read.  The slow path of
 * cpucycles_perf_read_fast().
 *
 * OPEN_EACH_PMU (a hybrid CPU) reads the sum of the thread's events:
 * the one active on this CPU's core type through its page and rdpmc, the
 * others from their pages' offsets, which hold their counts while they
 * are off the hardware (index 0), as <linux/perf_event.h> prescribes;
 * read(2) for a page that offers no user reads, or without rdpmc.  Every
 * event's count only grows, so the sum does too, whichever way the thread
 * migrates, even between two of the page reads. */
long long cpucycles_perf_read(struct cpucycles_perf_event *ev,
                              cpucycles_perf_rdpmc_fn rdpmc,
                              unsigned long long config1);

/* A perf counter's setup, in the probe thread.  Opens ev (mapped when
 * rdpmc is given) and reads it once; returns -1, with ev closed, when that
 * fails.  With rdpmc, also refuses an event whose page does not offer user
 * reads (cap_user_rdpmc 0: every read would be a read(2), which is
 * default-perfevent, not an on-core counter), and the counter is on-core;
 * setup never runs rdpmc (a hypervisor may trap it though the page offers
 * it, and nothing is armed here): info->may_fault is 1, so that the probe
 * tries the reads with crash signals caught.  Without rdpmc the counter is of kind
 * perf event, and its read(2) must count: each event whose count is
 * still 0 after a second read gets PERF_EVENT_IOC_DISABLE, _RESET and
 * _ENABLE and a third read, and a sum still 0 refuses the counter
 * (CPUCYCLES_PERF_REFUSAL_STUCK).  Neither is scaled nor 32-bit.  On a
 * hybrid CPU each of the thread's events must pass the page checks (the
 * count is their sum); more core PMUs than CPUCYCLES_PMU_MAX refuse it
 * (CPUCYCLES_PERF_REFUSAL_PMUS). */
int cpucycles_perf_setup(struct cpucycles_perf_event *ev,
                         cpucycles_perf_rdpmc_fn rdpmc,
                         unsigned long long config1,
                         struct counter_info *info);

/* Read the thread's count from its self-monitoring page, as the comment
 * on struct perf_event_mmap_page in <linux/perf_event.h> prescribes:
 * retry while the kernel's sequence number `lock` changes under us; the
 * count is offset + the hardware counter (index - 1) read with rdpmc,
 * sign-extended from pmc_width bits.  Returns 0 and the count in *out, or
 * -1 when user-space reading is not possible right now (cap_user_rdpmc 0,
 * or an implausible pmc_width): the caller then read()s the fd.
 *
 * index 0 means the event is not on a hardware counter at this moment.
 * With index0_counts, the count is then the offset alone, where the
 * kernel left the event's whole count when it took the event off (a
 * hybrid CPU's events of the other core types: see cpucycles_perf_read);
 * without, -1, and the caller read()s the fd.
 *
 * Pure apart from the rdpmc it is given, so tests can hand it a page in
 * ordinary memory and a fake rdpmc.  Inline because it is the hot path of
 * the *-perfpmc counters: called with the counter's own static inline
 * rdpmc and a constant index0_counts, the compiler inlines the
 * instruction (no indirect call) and drops the branch not taken. */
static inline int cpucycles_perf_page_count(
    const volatile struct perf_event_mmap_page *pg,
    cpucycles_perf_rdpmc_fn rdpmc, long long *out, int index0_counts)
{
  unsigned int seq, index, width;
  unsigned long long offset, pmc;

  do {
    seq = pg->lock;
    /* The kernel updates the page from this same thread's CPU (at a
     * context switch or an interrupt), never concurrently with us, so a
     * compiler barrier is enough: the loads must not move out of the
     * seq...seq window. */
    __asm__ __volatile__("" ::: "memory");
    index = pg->index;
    offset = (unsigned long long) pg->offset;
    if (!pg->cap_user_rdpmc || index == 0) {
      /* (cap_user_rdpmc read again: index0_counts is a constant, so the
       * hot path, without it, keeps one test for both) */
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

  /* The hardware counter is width bits wide and the kernel programs it
   * with a negative start value: sign-extend, then add the offset
   * (unsigned arithmetic: wrap-around, not overflow). */
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

/* The hot path of the *-perfpmc counters: the page read when the thread's
 * event is open and the page allows it, else cpucycles_perf_read() (also
 * a hybrid CPU's OPEN_EACH_PMU: one state test, and a machine with one
 * core type pays nothing more for the other's events).  A
 * counter calls it from its read function with its own TLS event and its
 * own static inline rdpmc; both are compile-time constants there, so this,
 * the page loop and the instruction all inline into the counter's read:
 * one TLS load of the state, the seqlock loop, the instruction, no
 * indirect call. */
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
