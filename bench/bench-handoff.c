/* bench-handoff: how far a value of cpucycles() read on one CPU and
 * handed to a thread on another CPU can lie above that thread's next
 * value, measured on this machine.
 *
 * Two threads, pinned to two CPUs: one calls the counter again and again
 * and publishes each value (a release store); the other, again and
 * again, takes the latest published value (an acquire load) and then
 * calls the counter itself.  Its value is read after it saw the other's,
 * so in an ideal world it is never smaller.  The figure is how often it
 * is smaller (an inversion) and by how much at most, for each direction
 * (the threads then swap CPUs).
 *
 * Why it happens: the counter instruction is not ordered after the load
 * that saw the other thread's value (x86's RDTSC "does not necessarily
 * wait until all previous instructions have been executed", Intel SDM,
 * RDTSC; arm64's CNTVCT_EL0 may be read speculatively, out of order), so
 * it may be read while the load still waits for the cache line, which
 * then brings a value published after that read; and two CPUs' counters
 * agree only as well as firmware, kernel and hypervisor synchronised
 * them.  The baseline in the same run fences both reads (x86-64: lfence;
 * rdtsc, arm64: isb; mrs), which removes the first cause and leaves the
 * second; the fence's cost per read is shown next to the unfenced read's
 * (median back-to-back differences).
 *
 *   bench/bench-handoff [SAMPLES]   (per direction; default 2000000)
 *
 * Reports only: never a pass or a fail (machines are shared and noisy). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpucycles.h"
#include "inline-counter.h"
#include "median.h"

#ifdef INLINE_COUNTER
#define FENCED INLINE_COUNTER_FENCED
#define UNFENCED INLINE_COUNTER
static long long fenced_read(void)
{
  return inline_counter_fenced();
}
static long long unfenced_read(void)
{
  return inline_counter();
}
#endif

#define KEPT 65536
#define STRIDE 16

/* The published value, alone on its cache line; the run's start and
 * end. */
static struct {
  _Alignas(64) atomic_llong value;
  _Alignas(64) atomic_int started;
  atomic_int stop;
} shared;

struct side {
  int cpu;                  /* pinned to, -1 when not pinned */
  long long (*read)(void);
  unsigned long long samples;
  /* the sampler's result */
  unsigned long long inversions;
  long long worst;          /* largest amount (published - later) */
  long long kept[KEPT];     /* later - published, every STRIDE-th */
  unsigned kept_count;
};

static void pin(int cpu)
{
#ifdef CPU_SET
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  }
#else
  (void) cpu;
#endif
}

static void *publish(void *arg)
{
  struct side *s = arg;
  pin(s->cpu);
  atomic_store_explicit(&shared.value, s->read(), memory_order_release);
  atomic_store_explicit(&shared.started, 1, memory_order_release);
  while (!atomic_load_explicit(&shared.stop, memory_order_relaxed))
    atomic_store_explicit(&shared.value, s->read(), memory_order_release);
  return 0;
}

static void *sample(void *arg)
{
  struct side *s = arg;
  unsigned long long i;
  pin(s->cpu);
  while (!atomic_load_explicit(&shared.started, memory_order_acquire)) sched_yield();
  for (i = 0; i < s->samples; i++) {
    long long published = atomic_load_explicit(&shared.value, memory_order_acquire);
    long long later = s->read();
    if (later < published) {
      s->inversions++;
      if (published - later > s->worst) s->worst = published - later;
    }
    if (i % STRIDE == 0 && s->kept_count < KEPT) s->kept[s->kept_count++] = later - published;
  }
  atomic_store_explicit(&shared.stop, 1, memory_order_relaxed);
  return 0;
}

/* Values published on from, sampled on to. */
static void direction(long long (*read)(void), unsigned long long samples, int from, int to,
                      struct side *result)
{
  struct side publisher;
  pthread_t t[2];
  memset(&publisher, 0, sizeof publisher);
  memset(result, 0, sizeof *result);
  publisher.cpu = from;
  publisher.read = read;
  result->cpu = to;
  result->read = read;
  result->samples = samples;
  atomic_store(&shared.value, 0);
  atomic_store(&shared.started, 0);
  atomic_store(&shared.stop, 0);
  if (pthread_create(&t[0], 0, publish, &publisher) != 0 ||
      pthread_create(&t[1], 0, sample, result) != 0) {
    perror("bench-handoff: pthread_create");
    exit(1);
  }
  pthread_join(t[1], 0);
  pthread_join(t[0], 0);
}

/* Both directions between cpus[0] and cpus[1]; prints one line. */
static long long median_kept(struct side *s)
{
  if (s->kept_count == 0) return 0;
  qsort(s->kept, s->kept_count, sizeof s->kept[0], compare);
  return s->kept[s->kept_count / 2];
}

static void run(const char *what, long long (*read)(void), unsigned long long samples,
                const int cpus[2])
{
  static struct side forth, back;
  direction(read, samples, cpus[0], cpus[1], &forth);
  direction(read, samples, cpus[1], cpus[0], &back);
  printf("%s: %llu inversions in %llu hand-offs, largest %lld"
         " (CPU %d to %d: %llu, largest %lld, median later - published %lld;"
         " CPU %d to %d: %llu, largest %lld, median %lld)\n",
         what, forth.inversions + back.inversions, 2 * samples,
         forth.worst > back.worst ? forth.worst : back.worst,
         cpus[0], cpus[1], forth.inversions, forth.worst, median_kept(&forth),
         cpus[1], cpus[0], back.inversions, back.worst, median_kept(&back));
}

#ifdef FENCED
static long long back_to_back(long long (*read)(void))
{
  static long long t[READS];
  long long m[21];
  int r, i;
  for (r = 0; r < 21; r++) {
    for (i = 0; i < READS; i++) t[i] = read();
    m[r] = median_step(t);
  }
  qsort(m, 21, sizeof m[0], compare);
  return m[10];
}
#endif

int main(int argc, char **argv)
{
  unsigned long long samples = argc > 1 ? strtoull(argv[1], 0, 10) : 2000000;
  int cpus[2] = { -1, -1 };
#ifdef CPU_SET
  cpu_set_t set;
  int c, found = 0;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (c = 0; c < CPU_SETSIZE && found < 2; c++)
      if (CPU_ISSET(c, &set)) cpus[found++] = c;
  if (found < 2) cpus[0] = cpus[1] = -1;
#endif
  if (samples == 0) samples = 1;
  cpucycles(); /* the probe, outside the measurement */
  printf("implementation %s, persecond %lld\n", cpucycles_implementation(),
         cpucycles_persecond());
  if (cpus[0] < 0)
    printf("note: fewer than two CPUs to pin to: threads not pinned\n");
  run("cpucycles()", cpucycles, samples, cpus);
#ifdef FENCED
  run("baseline (" FENCED ")", fenced_read, samples, cpus);
  {
    long long plain = back_to_back(unfenced_read), fenced = back_to_back(fenced_read);
    printf("cost of the fence: median back-to-back difference %lld (" FENCED ") against %lld"
           " (" UNFENCED "), ratio %.3f\n", fenced, plain,
           plain > 0 ? (double) fenced / (double) plain : 0.0);
  }
#else
  printf("baseline: none on this ISA\n");
#endif
  return 0;
}
