/* A client whose threads race into the first call, for valgrind's race
 * detectors (tests/check-sanitizers.sh steps helgrind and drd): the
 * program itself is free of races, so every report would be about the
 * library.
 *
 * Eight threads wait at a barrier, then make their first call through
 * the four entry points at once and read 1000 times.  One more thread
 * synchronises with nobody: it waits until the public pointer cpucycles
 * changes (a plain load, as every caller makes) and then reads, which is
 * how a thread that has never called the library meets the published
 * counter.  "race-client no-tsc" disables RDTSC first (x86 Linux), so that
 * the OS clocks read the system call. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#if defined(__linux__) && (defined(__x86_64__) || defined(__i386__))
#include <sys/prctl.h>
#endif
#include "cpucycles.h"

#define RACERS 8

static pthread_barrier_t start_line;

static long long reads(void)
{
  long long sum = 0;
  int i;
  for (i = 0; i < 1000; i++) sum += cpucycles();
  return sum + cpucycles_persecond() + (long long) strlen(cpucycles_implementation());
}

static void *racer(void *arg)
{
  long entry = (long) arg;
  pthread_barrier_wait(&start_line);
  switch (entry % 4) {
    case 0: cpucycles(); break;
    case 1: cpucycles_persecond(); break;
    case 2: cpucycles_implementation(); break;
    default: cpucycles_version(); cpucycles(); break;
  }
  return (void *) (long) (reads() & 1);
}

static void *latecomer(void *arg)
{
  long long (*before)(void) = *(long long (**)(void)) arg;
  while (cpucycles == before) sched_yield();
  return (void *) (long) (reads() & 1);
}

int main(int argc, char **argv)
{
  pthread_t t[RACERS], late;
  long long (*before)(void) = cpucycles;
  long i;

  if (argc > 1 && strcmp(argv[1], "no-tsc") == 0) {
#if defined(PR_SET_TSC) && defined(PR_TSC_SIGSEGV)
    if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0) return 77;
#else
    return 77;
#endif
  }
  pthread_barrier_init(&start_line, 0, RACERS);
  if (pthread_create(&late, 0, latecomer, &before) != 0) return 2;
  for (i = 0; i < RACERS; i++)
    if (pthread_create(&t[i], 0, racer, (void *) i) != 0) return 2;
  for (i = 0; i < RACERS; i++) pthread_join(t[i], 0);
  pthread_join(late, 0);
  pthread_barrier_destroy(&start_line);
  printf("%s\n", cpucycles_implementation());
  return strcmp(cpucycles_implementation(), "default-zero") == 0;
}
