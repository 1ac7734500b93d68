/* bench-perfthreads: default-perfevent read from timer signals in many
 * short-lived threads, the case where a read that costs two system calls
 * made a program crawl: 300 threads, 4 at a time, each reading
 * cpucycles() 2,000 times while a timer of its own fires every 20 us and
 * its handler reads cpucycles() too.  Each thread's first read opens its
 * event (perf-registry.c), and its exit closes it.
 *
 * Without a PMU the events are real per-thread software events (task
 * clock, bench/stand-in.h), opened through the opener seam; the read path
 * is the library's: the event's identity (PERF_EVENT_IOC_ID), then
 * read(2), so that a number the program closed and reused is never read
 * (doc/perf-counters.md, "Descriptors the program closes").  The figure is
 * the scenario's wall time in milliseconds, in a fresh process; the
 * baseline, measured in the same run, is the same scenario without the
 * library: each thread opens its own event and read(2)s it, the least any
 * per-thread event read costs.  Also printed: how often the library asked
 * an event's identity, counted through the ioctl seam: once a read, and
 * at a thread's open and close.  Target: the scenario ends, within twice
 * the baseline. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include "cpucycles.h"
#include "stand-in.h"

#ifdef CPUCYCLES_PERF_AVAILABLE

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THREADS 300
#define AT_ONCE 4
#define READS 2000
#define TIMER_NS 20000
#define DEADLINE 120 /* seconds: a scenario still running is reported */

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

static unsigned long handled, identity_asked;
static int bare;             /* the baseline: no library */
static __thread int bare_fd = -1;

static long long read_now(void)
{
  long long value = 0;
  if (!bare) return cpucycles();
  if (bare_fd < 0 || read(bare_fd, &value, sizeof value) != sizeof value) return 1;
  return value;
}

static void on_timer(int sig)
{
  (void) sig;
  if (read_now() != 0) __atomic_fetch_add(&handled, 1, __ATOMIC_RELAXED);
}

static int counting_ioctl(int fd, unsigned long request, void *arg)
{
  if (request == PERF_EVENT_IOC_ID)
    __atomic_fetch_add(&identity_asked, 1, __ATOMIC_RELAXED);
  return ioctl(fd, request, arg);
}

static void *reader(void *unused)
{
  struct sigevent ev;
  struct itimerspec every = { { 0, TIMER_NS }, { 0, TIMER_NS } };
  timer_t timer;
  long long last = 0;
  int i, armed;

  (void) unused;
  if (bare) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.exclude_kernel = 1;
    bare_fd = task_clock_event(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  }
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = SIGRTMIN + 1;
  ev.sigev_notify_thread_id = (pid_t) syscall(SYS_gettid);
  armed = timer_create(CLOCK_MONOTONIC, &ev, &timer) == 0
          && timer_settime(timer, 0, &every, 0) == 0;
  for (i = 0; i < READS; i++) last += read_now() & 1;
  if (armed) timer_delete(timer);
  if (bare_fd >= 0) {
    int fd = bare_fd;
    bare_fd = -1;
    close(fd);
  }
  return (void *) (long) last;
}

static double msec_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* In a fresh child: the scenario with counter named (0: the baseline,
 * no library); prints its line. */
static void scenario(const char *counter)
{
  struct sigaction sa;
  pthread_t t[AT_ONCE];
  double start, ms;
  int wave, i;

  bare = !counter;
  if (bare) counter = "read(2) of a thread's own event, no library";
  else setenv("CPUCYCLES_COUNTER", counter, 1);
  cpucycles_perf_set_opener(task_clock_event);
  cpucycles_perf_set_ioctl(counting_ioctl);
#ifdef CPUCYCLES_PMU_MAX
  cpucycles_perf_set_sysfs_root("/nonexistent"); /* one event, not one per PMU */
#endif
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_timer;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGRTMIN + 1, &sa, 0);
  if (!bare) cpucycles(); /* the first call, outside the figure */
  if (!bare && strcmp(cpucycles_implementation(), counter) != 0) {
    printf("%s: not available here (%s chosen)\n", counter,
           cpucycles_implementation());
    exit(2);
  }
  start = msec_now();
  for (wave = 0; wave < THREADS / AT_ONCE; wave++) {
    for (i = 0; i < AT_ONCE; i++)
      if (pthread_create(&t[i], 0, reader, 0) != 0) exit(3);
    for (i = 0; i < AT_ONCE; i++) pthread_join(t[i], 0);
  }
  ms = msec_now() - start;
  printf("%s: %.1f ms (%lu reads in timer handlers)", counter, ms,
         __atomic_load_n(&handled, __ATOMIC_RELAXED));
  if (!bare)
    printf("; identity asked %lu times",
           __atomic_load_n(&identity_asked, __ATOMIC_RELAXED));
  printf("\n");
  fflush(stdout);
  /* the figure, for the parent */
  fprintf(stderr, "%.3f\n", ms);
  exit(0);
}

/* The scenario's milliseconds in a child, or -1 where it did not run or
 * end within DEADLINE. */
static double run(const char *counter)
{
  int fds[2], status, waited = 0;
  char text[64];
  ssize_t n;
  pid_t pid;

  if (pipe(fds) != 0) return -1;
  fflush(stdout);
  pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 2);
    scenario(counter);
  }
  close(fds[1]);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (waited++ >= DEADLINE * 10) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      printf("%s: still running after %d s, stopped\n",
             counter ? counter : "baseline", DEADLINE);
      close(fds[0]);
      return -1;
    }
    usleep(100000);
  }
  n = read(fds[0], text, sizeof text - 1);
  close(fds[0]);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || n <= 0) return -1;
  text[n] = 0;
  return atof(text);
}

int main(void)
{
  double perf, base;

  printf("%d threads, %d at a time, %d reads each, a timer every %d us per thread"
         " whose handler reads too\n", THREADS, AT_ONCE, READS, TIMER_NS / 1000);
  perf = run("default-perfevent");
  base = run(0);
  if (perf > 0 && base > 0)
    printf("ratio default-perfevent / read(2) alone %.2f\n", perf / base);
  return 0;
}

#else

int main(void)
{
  printf("perf threads: no Linux perf_event here\n");
  return 0;
}

#endif
