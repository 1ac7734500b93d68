/* bench-perfread: what the perf counters' read costs, next to the
 * instruction it wraps, measured in the same run, on machines without a
 * PMU: the events are stand-ins (memfds holding a self-monitoring page, in
 * ordinary memory, through lib/perf.c's opener seam) and the hardware
 * counter read is rdtsc (x86) or a plain memory load (elsewhere):
 * bench/stand-in.h.
 *
 * The median difference between back-to-back reads, for:
 * - the instruction alone, inlined: the baseline;
 * - one core type (every machine but a hybrid one): the thread's one
 *   event, through cpucycles_perf_read_fast() inlined as the *-perfpmc
 *   counters inline it: the sequence-lock loop around the instruction;
 * - a hybrid CPU with two core types: one event per core PMU, the sum of
 *   the active event's count and the other's offset (the slow path, an
 *   out-of-line call and the instruction through a pointer).
 * Target: one core type within a few cycles of the baseline, whatever
 * the hybrid support adds elsewhere.
 *
 * Back-to-back differences move in steps of the instruction's own
 * granularity (about 26 cycles for rdtsc in a VM), too coarse for the few
 * cycles a check costs, so each counter's read is also timed as the
 * average of 1000 reads in a loop, each through a function pointer:
 * the instruction alone; amd64-perfpmc's read (the page loop);
 * amd64-perfpmcff's, the page checked at each read, against its read
 * before it checked the page (the instruction behind a state and epoch
 * test); the hybrid sum.
 *
 * Then the thread-local storage, as in the library: a stand-in counter in
 * a shared object (bench/perfread-module.c), its event a thread-local
 * there, called through a function pointer as cpucycles() calls the
 * chosen counter; once with the library's own thread-local model
 * (perfread-lib.so) and once with initial-exec (perfread-ie.so, what the
 * library used before it stopped taking glibc's static TLS reserve).
 *
 * Last, default-perfevent's read(2) path with a real event where the
 * kernel gives one (a software task-clock event: no PMU needed), in
 * nanoseconds per read: the library's read (the event's identity asked,
 * read(2), the clock that a stopped count goes on with) against a bare
 * read(2) of the same event. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "stand-in.h"

#ifdef CPUCYCLES_PERF_AVAILABLE

#include "median.h"

#define ROUNDS 21
#define LOOP 1000

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

/* A module's read, through its pointer. */
static long long run_module(long long (*read)(void))
{
  static long long t[READS];
  int i;
  for (i = 0; i < READS; i++) t[i] = read();
  return median_step(t);
}

/* The average cost of one read over LOOP reads, in ticks of the
 * instruction, times 100 (the median of ROUNDS is taken as an integer). */
static volatile long long sink;

static long long per_read(long long (*read)(void))
{
  unsigned long long t0, t1;
  long long sum = 0;
  int i;
  t0 = instruction(0);
  for (i = 0; i < LOOP; i++) sum += read();
  t1 = instruction(0);
  sink = sum;
  return (long long) ((t1 - t0) * 100 / LOOP);
}

/* The program's own stand-in event, a plain global here (its page on
 * "counter" 0: index 1), and each counter's read of it as a function, for
 * the loop. */
static struct cpucycles_perf_event one;

static long long instruction_read(void)
{
  return (long long) instruction(0);
}

static long long program_read(void)
{
  return cpucycles_perf_read_fast(&one, instruction, 0);
}

static long long fixed_read(void)
{
  return cpucycles_perf_read_on(&one, instruction, 0, 1);
}

/* amd64-perfpmcff's read before it checked the page: the raw counter
 * behind a state and epoch test. */
static long long unchecked_fixed_read(void)
{
  if (__builtin_expect(one.state == CPUCYCLES_PERF_OPEN &&
                       one.epoch == cpucycles_perf_current_epoch(), 1))
    return (long long) instruction(0);
  return cpucycles_perf_read(&one, instruction, 0);
}

#ifdef CPUCYCLES_PMU_MAX
static struct cpucycles_perf_event hybrid;

static long long hybrid_read(void)
{
  return cpucycles_perf_read_fast(&hybrid, instruction, 0);
}
#endif

static long long (*module_setup(const char *path))(void)
{
  long long (*(*setup)(void))(void);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "bench-perfread: %s\n", dlerror());
    return 0;
  }
  *(void **) &setup = dlsym(h, "bench_module_setup");
  return setup ? setup() : 0;
}

static struct cpucycles_perf_event sw;

static long long sw_read(void)
{
  return cpucycles_perf_read(&sw, 0, 0);
}

static long long bare_read(void)
{
  long long count = 0;
  if (read(sw.fd, &count, sizeof count) != (ssize_t) sizeof count) return 0;
  return count;
}

static long long now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long) t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Nanoseconds per read of the software event, times 100. */
static long long sw_per_read(long long (*read_it)(void))
{
  long long t0, t1, sum = 0;
  int i;
  t0 = now_ns();
  for (i = 0; i < LOOP; i++) sum += read_it();
  t1 = now_ns();
  sink = sum;
  return (t1 - t0) * 100 / LOOP;
}

static long long median_of(long long *v)
{
  qsort(v, ROUNDS, sizeof v[0], compare);
  return v[ROUNDS / 2];
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
  long long base[ROUNDS], single[ROUNDS];
  long long lib[ROUNDS], ie[ROUNDS], loop_one[ROUNDS], loop_lib[ROUNDS], loop_ie[ROUNDS];
  long long loop_base[ROUNDS], loop_fixed[ROUNDS], loop_unchecked[ROUNDS];
  long long (*lib_read)(void), (*ie_read)(void);
#ifdef CPUCYCLES_PMU_MAX
  long long each[ROUNDS], loop_each[ROUNDS];
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

  lib_read = module_setup(MODULE_LIB);
  ie_read = module_setup(MODULE_IE);
  if (!lib_read || !ie_read) {
    fprintf(stderr, "bench-perfread: no stand-in counter in a module\n");
    return 1;
  }

  for (r = 0; r < ROUNDS; r++) {
    base[r] = run(0, 0);
    single[r] = run(&one, 1);
#ifdef CPUCYCLES_PMU_MAX
    each[r] = run(&hybrid, 1);
#endif
    lib[r] = run_module(lib_read);
    ie[r] = run_module(ie_read);
    loop_base[r] = per_read(instruction_read);
    loop_one[r] = per_read(program_read);
    loop_fixed[r] = per_read(fixed_read);
    loop_unchecked[r] = per_read(unchecked_fixed_read);
#ifdef CPUCYCLES_PMU_MAX
    loop_each[r] = per_read(hybrid_read);
#endif
    loop_lib[r] = per_read(lib_read);
    loop_ie[r] = per_read(ie_read);
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
  printf("average of %d reads in a loop, each through a pointer, in %s ticks:\n", LOOP,
         INSTRUCTION);
  printf("  the instruction alone: %.2f\n", (double) median_of(loop_base) / 100);
  printf("  amd64-perfpmc's read (the page loop): %.2f\n", (double) median_of(loop_one) / 100);
  printf("  amd64-perfpmcff's read, its page checked: %.2f; before, unchecked: %.2f\n",
         (double) median_of(loop_fixed) / 100, (double) median_of(loop_unchecked) / 100);
  if (median_of(loop_unchecked) > 0)
    printf("ratio amd64-perfpmcff checked / unchecked %.3f\n",
           (double) median_of(loop_fixed) / (double) median_of(loop_unchecked));
#ifdef CPUCYCLES_PMU_MAX
  printf("  the hybrid sum: %.2f\n", (double) median_of(loop_each) / 100);
#endif
  printf("a counter in a shared object, through a pointer, event thread-local:\n");
  printf("  initial-exec: %lld; the library's model: %lld\n", median_of(ie), median_of(lib));
  printf("average of %d reads in a loop, in %s ticks:\n", LOOP, INSTRUCTION);
  printf("  the program's event, a plain global: %.2f\n", (double) median_of(loop_one) / 100);
  printf("  in a shared object, initial-exec: %.2f\n", (double) median_of(loop_ie) / 100);
  printf("  in a shared object, the library's model: %.2f\n", (double) median_of(loop_lib) / 100);
  if (median_of(loop_ie) > 0)
    printf("ratio the library's model / initial-exec %.3f\n",
           (double) median_of(loop_lib) / (double) median_of(loop_ie));
  cpucycles_perf_close(&one);

  cpucycles_perf_set_opener(task_clock_event);
#ifdef CPUCYCLES_PMU_MAX
  cpucycles_perf_set_sysfs_root("/nonexistent"); /* one event, not one per PMU */
#endif
  if (cpucycles_perf_open(&sw, 0, 0) != 0) {
    printf("read(2) path: no software perf event here, not measured\n");
    return 0;
  }
  {
    long long library[ROUNDS], bare[ROUNDS];
    for (r = 0; r < ROUNDS; r++) {
      library[r] = sw_per_read(sw_read);
      bare[r] = sw_per_read(bare_read);
    }
    printf("read(2) path (default-perfevent), a software event, ns per read:\n");
    printf("  the library's read (identity, read(2), clock): %.1f; a bare read(2): %.1f\n",
           (double) median_of(library) / 100, (double) median_of(bare) / 100);
    if (median_of(bare) > 0)
      printf("ratio library / bare read(2) %.3f\n",
             (double) median_of(library) / (double) median_of(bare));
  }
  cpucycles_perf_close(&sw);
  return 0;
}

#else

int main(void)
{
  printf("perf read: no Linux perf_event here\n");
  return 0;
}

#endif
