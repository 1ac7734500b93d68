/* bench-perfread: what the perf counters' read costs, next to the
 * instruction it wraps, measured in the same run, on machines without a
 * PMU: the events are stand-ins (memfds holding a self-monitoring page, in
 * ordinary memory, through lib/perf.c's opener seam) and the hardware
 * counter read is rdtsc (x86-64) or a plain memory load (elsewhere).
 *
 * Three figures, each the median difference between back-to-back reads:
 * - the instruction alone, inlined: the baseline;
 * - one core type (every machine but a hybrid one): the thread's one
 *   event, through cpucycles_perf_read_fast() inlined as the *-perfpmc
 *   counters inline it: the sequence-lock loop around the instruction;
 * - a hybrid CPU with two core types: one event per core PMU, the sum of
 *   the active event's count and the other's offset (the slow path, an
 *   out-of-line call and the instruction through a pointer).
 * Target: one core type within a few cycles of the baseline, whatever
 * the hybrid support adds elsewhere. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf.h"

#ifdef CPUCYCLES_PERF_AVAILABLE

#include "median.h"

#define ROUNDS 21

#if defined(__x86_64__) || defined(__i386__)
#define INSTRUCTION "rdtsc"
static inline unsigned long long instruction(unsigned int counter)
{
  unsigned int lo, hi;
  (void) counter;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return (unsigned long long) hi << 32 | lo;
}
#else
#define INSTRUCTION "a volatile load"
static volatile unsigned long long ticking;
static inline unsigned long long instruction(unsigned int counter)
{
  (void) counter;
  return ticking++;
}
#endif

/* A stand-in event: a memfd whose first page says "on hardware counter 0,
 * user reads allowed, 64 bits". */
static int memfd_event(struct perf_event_attr *attr, pid_t pid, int cpu,
                       int group_fd, unsigned long flags)
{
  struct perf_event_mmap_page pg;
  int fd;
  (void) attr; (void) pid; (void) cpu; (void) group_fd; (void) flags;
  fd = memfd_create("bench-perf-event", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, sysconf(_SC_PAGESIZE)) != 0) return -1;
  memset(&pg, 0, sizeof pg);
  pg.lock = 2;
  pg.index = 1;
  pg.cap_user_rdpmc = 1;
  pg.pmc_width = 64;
  if (pwrite(fd, &pg, sizeof pg, 0) != (ssize_t) sizeof pg) return -1;
  return fd;
}

static long long run(struct cpucycles_perf_event *ev, int which)
{
  static long long t[READS];
  int i;
  if (which == 0)
    for (i = 0; i < READS; i++) t[i] = (long long) instruction(0);
  else
    for (i = 0; i < READS; i++) t[i] = cpucycles_perf_read_fast(ev, instruction, 0);
  return median_step(t);
}

#ifdef CPUCYCLES_PMU_MAX
/* sys/bus/event_source/devices under a temporary root, with two core
 * PMUs (an Intel hybrid CPU's). */
static char root[64];

static void plant(const char *rel, const char *text)
{
  char path[256];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", root, rel);
  f = fopen(path, "w");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0) exit(1);
}

static void make_hybrid_root(void)
{
  static const char *const dirs[] = {
    "sys", "sys/bus", "sys/bus/event_source", "sys/bus/event_source/devices",
    "sys/bus/event_source/devices/cpu_core",
    "sys/bus/event_source/devices/cpu_atom"
  };
  char path[256];
  size_t i;
  strcpy(root, "/tmp/bench-perfread-XXXXXX");
  if (!mkdtemp(root)) exit(1);
  for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", root, dirs[i]);
    if (mkdir(path, 0755) != 0) exit(1);
  }
  plant("sys/bus/event_source/devices/cpu_core/type", "4\n");
  plant("sys/bus/event_source/devices/cpu_core/cpus", "0-7\n");
  plant("sys/bus/event_source/devices/cpu_atom/type", "10\n");
  plant("sys/bus/event_source/devices/cpu_atom/cpus", "8-15\n");
}

static void remove_hybrid_root(void)
{
  static const char *const paths[] = {
    "sys/bus/event_source/devices/cpu_core/type",
    "sys/bus/event_source/devices/cpu_core/cpus",
    "sys/bus/event_source/devices/cpu_atom/type",
    "sys/bus/event_source/devices/cpu_atom/cpus",
    "sys/bus/event_source/devices/cpu_core",
    "sys/bus/event_source/devices/cpu_atom",
    "sys/bus/event_source/devices", "sys/bus/event_source", "sys/bus", "sys", ""
  };
  char path[256];
  size_t i;
  for (i = 0; i < sizeof paths / sizeof paths[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", root, paths[i]);
    remove(path);
  }
}
#endif

int main(void)
{
  static struct cpucycles_perf_event one;
  long long base[ROUNDS], single[ROUNDS];
#ifdef CPUCYCLES_PMU_MAX
  static struct cpucycles_perf_event hybrid;
  long long each[ROUNDS];
#endif
  int r;

  cpucycles_perf_set_opener(memfd_event);
#ifdef CPUCYCLES_PMU_MAX
  cpucycles_perf_set_sysfs_root("/nonexistent");
#endif
  if (cpucycles_perf_open(&one, 1, 0) != 0) {
    perror("bench-perfread: stand-in event");
    return 1;
  }
#ifdef CPUCYCLES_PMU_MAX
  make_hybrid_root();
  cpucycles_perf_set_sysfs_root(root);
  if (cpucycles_perf_open(&hybrid, 1, 0) != 0 ||
      hybrid.state != CPUCYCLES_PERF_OPEN_EACH_PMU) {
    fprintf(stderr, "bench-perfread: no hybrid stand-in events\n");
    remove_hybrid_root();
    return 1;
  }
  remove_hybrid_root();
  {
    /* the thread runs on a P-core: the E-core event is off the hardware
     * (index 0), its count in the page's offset */
    struct perf_event_mmap_page pg;
    if (pread(hybrid.more_fd[0], &pg, sizeof pg, 0) != (ssize_t) sizeof pg) return 1;
    pg.index = 0;
    pg.offset = 1000;
    if (pwrite(hybrid.more_fd[0], &pg, sizeof pg, 0) != (ssize_t) sizeof pg) return 1;
  }
#endif

  for (r = 0; r < ROUNDS; r++) {
    base[r] = run(0, 0);
    single[r] = run(&one, 1);
#ifdef CPUCYCLES_PMU_MAX
    each[r] = run(&hybrid, 1);
#endif
  }
  qsort(base, ROUNDS, sizeof base[0], compare);
  qsort(single, ROUNDS, sizeof single[0], compare);
  printf("perf read, stand-in events, hardware counter read = %s\n", INSTRUCTION);
  printf("baseline (inline %s) median back-to-back difference: %lld\n",
         INSTRUCTION, base[ROUNDS / 2]);
  printf("one core type (one event, inline page read): %lld\n", single[ROUNDS / 2]);
  if (base[ROUNDS / 2] > 0)
    printf("ratio one core type / baseline %.3f\n",
           (double) single[ROUNDS / 2] / (double) base[ROUNDS / 2]);
#ifdef CPUCYCLES_PMU_MAX
  qsort(each, ROUNDS, sizeof each[0], compare);
  printf("hybrid, two core types (two events, summed): %lld\n", each[ROUNDS / 2]);
  if (single[ROUNDS / 2] > 0)
    printf("ratio hybrid / one core type %.3f\n",
           (double) each[ROUNDS / 2] / (double) single[ROUNDS / 2]);
  cpucycles_perf_close(&hybrid);
#endif
  cpucycles_perf_close(&one);
  return 0;
}

#else

int main(void)
{
  printf("perf read: no Linux perf_event here\n");
  return 0;
}

#endif
