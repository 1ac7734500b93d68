/* bench-firstcall: what the first cpucycles() costs (the whole probe and
 * the frequency estimate), in microseconds of CLOCK_MONOTONIC, in fresh
 * processes.  Target: at most 250 us on x86-64, also when /proc/cpuinfo
 * has no frequency line; at most 20 ms under qemu-user for aarch64.
 *
 * Baseline measured in the same run: the first call when CPUCYCLES_COUNTER
 * names the counter the probe chose, i.e. the cost of one counter's setup
 * and checks without trying the others.
 *
 * With --no-cpuinfo-frequency (root only) each child first bind-mounts, in
 * a private mount namespace, a copy of /proc/cpuinfo with its frequency
 * lines removed over /proc/cpuinfo, so the estimate falls through to the
 * default.
 *
 * Then one more fresh process, traced (bench/syscall-trace.h): the system
 * calls of its first call, those of signal handling (rt_sigaction,
 * rt_sigprocmask, rt_sigpending, sigaltstack) each counted.  Where ptrace
 * cannot be used (qemu-user, a Yama policy, not Linux) it says so and
 * goes on. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cpucycles.h"
#include "syscall-trace.h"

#define RUNS 41

/* The issues' targets, for the report (never asserted: machines are
 * shared and noisy). */
#define TARGET_RATIO "first call at most 1.3 times the baseline; on x86-64 no signal system call\n" \
  "  (no crash catcher: every x86-64 counter asks the kernel, and the perf registry's\n" \
  "  lock blocks no signal; only a perf page that offers user RDPMC arms the catcher)"
#if defined(__x86_64__)
#define TARGET " (target <= 250 us on x86-64)"
#elif defined(__aarch64__)
#define TARGET " (target <= 20000 us under qemu-user)"
#else
#define TARGET ""
#endif

static double usec_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int compare(const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* Hide the frequency lines of /proc/cpuinfo from this process. */
static int hide_cpuinfo_frequency(void)
{
  char path[] = "/tmp/bench-cpuinfo-XXXXXX";
  char line[4096];
  FILE *in, *out;
  int fd;
  if (unshare(CLONE_NEWNS) != 0) return -1;
  if (mount(0, "/", 0, MS_REC | MS_PRIVATE, 0) != 0) return -1;
  fd = mkstemp(path);
  if (fd < 0) return -1;
  out = fdopen(fd, "w");
  in = fopen("/proc/cpuinfo", "r");
  if (!in || !out) return -1;
  while (fgets(line, sizeof line, in))
    if (strncmp(line, "cpu MHz", 7) != 0 && strncmp(line, "clock", 5) != 0) fputs(line, out);
  fclose(in);
  fclose(out);
  if (mount(path, "/proc/cpuinfo", 0, MS_BIND, 0) != 0) return -1;
  unlink(path);
  return 0;
}

/* What a child reports besides its cost.  The parent never calls the
 * library: its children must each make a true first call. */
static long long child_persecond;
static char child_implementation[64];

/* One fresh process: the cost of its first call, or -1. */
static double first_call(int hide)
{
  int p[2];
  double cost = -1;
  long long persecond = 0;
  char implementation[64];
  pid_t pid;
  if (pipe(p) != 0) return -1;
  pid = fork();
  if (pid == 0) {
    double start, end;
    if (hide && hide_cpuinfo_frequency() != 0) _exit(2);
    start = usec_now();
    cpucycles();
    end = usec_now();
    cost = end - start;
    persecond = cpucycles_persecond();
    memset(implementation, 0, sizeof implementation);
    strncpy(implementation, cpucycles_implementation(), sizeof implementation - 1);
    if (write(p[1], &cost, sizeof cost) != sizeof cost) _exit(1);
    if (write(p[1], &persecond, sizeof persecond) != sizeof persecond) _exit(1);
    if (write(p[1], implementation, sizeof implementation) != sizeof implementation) _exit(1);
    _exit(0);
  }
  close(p[1]);
  if (read(p[0], &cost, sizeof cost) != sizeof cost) cost = -1;
  if (read(p[0], &persecond, sizeof persecond) == sizeof persecond) child_persecond = persecond;
  if (read(p[0], implementation, sizeof implementation) == sizeof implementation)
    memcpy(child_implementation, implementation, sizeof implementation);
  close(p[0]);
  waitpid(pid, 0, 0);
  return cost;
}

static int traced_prepare(void *hide)
{
  return *(int *) hide ? hide_cpuinfo_frequency() : 0;
}

static void traced_first_call(void *unused)
{
  (void) unused;
  cpucycles();
}

/* The first call's system calls, those of signal handling by name. */
static void print_signal_syscalls(int hide)
{
  struct syscall_counts c;
  char why[128];
  if (trace_syscalls(traced_prepare, traced_first_call, &hide, &c, why, sizeof why) != 0) {
    printf("signal system calls: not measured (%s)\n", why);
    return;
  }
  printf("signal system calls of the first call: %ld (rt_sigaction %ld, rt_sigprocmask %ld, "
         "rt_sigpending %ld, sigaltstack %ld), of %ld system calls\n",
         c.rt_sigaction + c.rt_sigprocmask + c.rt_sigpending + c.sigaltstack,
         c.rt_sigaction, c.rt_sigprocmask, c.rt_sigpending, c.sigaltstack, c.total);
}

static double median_first_call(int hide)
{
  double c[RUNS];
  int i;
  for (i = 0; i < RUNS; i++) {
    c[i] = first_call(hide);
    if (c[i] < 0) return -1;
  }
  qsort(c, RUNS, sizeof c[0], compare);
  return c[RUNS / 2];
}

int main(int argc, char **argv)
{
  int hide = argc > 1 && strcmp(argv[1], "--no-cpuinfo-frequency") == 0;
  double full, single;
  const char *chosen;

  full = median_first_call(hide);
  if (full < 0) {
    fprintf(stderr, "bench-firstcall: could not measure%s\n",
            hide ? " (--no-cpuinfo-frequency needs root and mount namespaces)" : "");
    return 1;
  }
  chosen = child_implementation;
  setenv("CPUCYCLES_COUNTER", chosen, 1);
  single = median_first_call(hide);
  unsetenv("CPUCYCLES_COUNTER");

  printf("first call%s: median %.1f us over %d fresh processes%s\n",
         hide ? " without cpuinfo frequency" : "", full, RUNS, TARGET);
  printf("baseline, first call with CPUCYCLES_COUNTER=%s: median %.1f us\n", chosen, single);
  if (single > 0) printf("ratio %.2f\n", full / single);
  print_signal_syscalls(hide);
  printf("target: %s\n", TARGET_RATIO);
  printf("persecond in the children %lld, implementation %s\n", child_persecond, chosen);
  return 0;
}
