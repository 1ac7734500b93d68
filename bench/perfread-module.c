/* A loadable module for bench-perfread: a stand-in perf counter built as
 * the library builds its perf counters (lib/perf.c linked in, the same
 * compiler flags, the event in thread-local storage, the read through
 * cpucycles_perf_read_fast()), so that the bench can measure what reading
 * a thread-local from a shared object costs on the perf hot path.  Built
 * twice: perfread-lib.so with the library's own thread-local model, and
 * perfread-ie.so with initial-exec (BENCH_INITIAL_EXEC), for comparison
 * in the same run. */
#include <config.h>
#include "stand-in.h"

#ifdef CPUCYCLES_PERF_AVAILABLE

static __thread struct cpucycles_perf_event event
#ifdef BENCH_INITIAL_EXEC
  __attribute__((tls_model("initial-exec")))
#endif
  ;

static long long module_read(void)
{
  return cpucycles_perf_read_fast(&event, instruction, 0);
}

/* Opens the calling thread's stand-in event; returns the read function,
 * or 0.  What the module exports, found by bench-perfread with dlsym(). */
__attribute__((visibility("default"))) long long (*bench_module_setup(void))(void);

long long (*bench_module_setup(void))(void)
{
  cpucycles_perf_set_opener(memfd_event);
  cpucycles_perf_set_sysfs_root("/nonexistent");
  if (cpucycles_perf_open(&event, 1, 0) != 0) return 0;
  return module_read;
}

#else

__attribute__((visibility("default"))) long long (*bench_module_setup(void))(void);

long long (*bench_module_setup(void))(void)
{
  return 0;
}

#endif
