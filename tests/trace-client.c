/* A client that prints, then traces, then prints again, with stdout fully
 * buffered (as it is on a pipe or a file): tests/trace-order.sh checks
 * that the trace lines come between its two lines, as with libcpucycles,
 * which prints its trace with stdio.
 *
 * "trace-client held": meanwhile a logger thread holds stdout's lock
 * (flockfile) and timestamps its line with cpucycles() while the main
 * thread's first call is tracing.  The first call must not wait for that
 * lock while the logger waits for the first call: the program ends, the
 * logger's line and every trace line are printed.
 *
 * "trace-client chosen": then "client chose NAME", the counter chosen. */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpucycles.h"

static int logger_locked, probe_running;

/* The library reads its variables at the start of the first call, which
 * is how the logger knows the probe is under way. */
#define INTERPOSED __attribute__((visibility("default")))
INTERPOSED char *secure_getenv(const char *name);
char *secure_getenv(const char *name)
{
  static char *(*real)(const char *);
  if (!real) *(void **) &real = dlsym(RTLD_NEXT, "secure_getenv");
  if (strcmp(name, "cpucyclespersecond") == 0)
    __atomic_store_n(&probe_running, 1, __ATOMIC_RELEASE);
  return real ? real(name) : getenv(name);
}

static void *logger(void *unused)
{
  long long t;
  (void) unused;
  flockfile(stdout);
  __atomic_store_n(&logger_locked, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&probe_running, __ATOMIC_ACQUIRE)) sched_yield();
  t = cpucycles();
  printf("logger line at %lld\n", t);
  funlockfile(stdout);
  return 0;
}

int main(int argc, char **argv)
{
  static char buffer[4096];
  int held = argc > 1 && strcmp(argv[1], "held") == 0;
  pthread_t t;

  setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
  printf("client before\n");
  if (held) {
    if (pthread_create(&t, 0, logger, 0) != 0) return 2;
    while (!__atomic_load_n(&logger_locked, __ATOMIC_ACQUIRE)) sched_yield();
  }
  cpucycles_tracesetup();
  cpucycles();
  if (held) pthread_join(t, 0);
  printf("client after\n");
  if (argc > 1 && strcmp(argv[1], "chosen") == 0)
    printf("client chose %s\n", cpucycles_implementation());
  return fflush(stdout) == 0 ? 0 : 1;
}
