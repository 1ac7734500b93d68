/* Reliability promises of the public API, through the shared library as a
 * user links it (doc/security.md):
 *  - threads race into the first call through every entry point;
 *  - fork() after init, before init, from a multi-threaded parent and in
 *    the middle of another thread's first call: the child counts, is
 *    monotone, agrees on the implementation, and inherits no probe state;
 *  - signal handlers and the signal mask are exactly as before the probe;
 *  - descriptors: none left behind but the chosen counter's, each
 *    close-on-exec;
 *  - the hot path works from signal handlers (SIGALRM, SIGPROF).
 *
 * Check runs each test in its own process, so each one makes the first
 * call.  Children of fork() report through their exit status.
 *
 * The same program is also the helper of tests/check-setuid.sh and of the
 * valgrind step of tests/check-sanitizers.sh: with an argument it runs
 * that mode instead of the suite (see helper_main). */
#include <config.h>
#include <check.h>
#include "check-run.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cpucycles.h"
#include "checked-by.h"

/* ---- helpers ---- */

static void say(const char *s)
{
  size_t len = strlen(s);
  while (len > 0) {
    ssize_t w = write(1, s, len);
    if (w <= 0) return;
    s += w;
    len -= (size_t) w;
  }
}

/* cpucycles() n times: 0 when never decreasing and increasing at least
 * once, 1 otherwise.  Usable in a child after fork (no stdio, no heap). */
static int monotone_run(long n)
{
  long long prev = cpucycles(), now;
  long i, increases = 0;
  for (i = 0; i < n; i++) {
    now = cpucycles();
    if (now < prev) return 1;
    increases += now > prev;
    prev = now;
  }
  return increases > 0 ? 0 : 1;
}

/* Child exit codes, so that a failure says what failed. */
enum {
  CHILD_OK = 0,
  CHILD_NOT_MONOTONE = 10,
  CHILD_OTHER_IMPLEMENTATION = 11,
  CHILD_DEFAULT_ZERO = 12,
  CHILD_HANDLER_CHANGED = 13,
  CHILD_MASK_CHANGED = 14,
  CHILD_PERSECOND_CHANGED = 15,
  CHILD_HUNG = 16,
  CHILD_FORK_FAILED = 17
};

static const int crash_signals[] = { SIGILL, SIGFPE, SIGBUS, SIGSEGV, SIGABRT };
#define CRASH_SIGNALS ((int) (sizeof crash_signals / sizeof crash_signals[0]))

static void user_handler(int sig) { (void) sig; }
static void user_action(int sig, siginfo_t *info, void *context)
{
  (void) sig; (void) info; (void) context;
}

/* Whatever a caller might have installed before its first cpucycles(). */
static void install_user_handlers(void)
{
  struct sigaction a;
  int i;
  for (i = 0; i < CRASH_SIGNALS; i++) {
    memset(&a, 0, sizeof a);
    sigemptyset(&a.sa_mask);
    if (i % 2) {
      a.sa_sigaction = user_action;
      a.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
      sigaddset(&a.sa_mask, SIGUSR2);
      sigaddset(&a.sa_mask, SIGTERM);
    } else {
      a.sa_handler = user_handler;
      a.sa_flags = SA_ONSTACK | SA_RESETHAND;
      sigaddset(&a.sa_mask, SIGHUP);
    }
    ck_assert_int_eq(sigaction(crash_signals[i], &a, 0), 0);
  }
}

static int same_sigset(const sigset_t *a, const sigset_t *b)
{
  int s;
  for (s = 1; s < NSIG; s++)
    if (sigismember(a, s) != sigismember(b, s)) return 0;
  return 1;
}

/* glibc's sigaction() adds SA_RESTORER (and its own restorer) to every
 * action it installs, SIG_DFL included.  A signal nobody ever set reads
 * back without it, the same SIG_DFL restored reads back with it: the same
 * action, and the flag is not the caller's to set. */
#ifdef SA_RESTORER
#define INTERNAL_FLAGS SA_RESTORER
#elif defined(__linux__)
#define INTERNAL_FLAGS 0x04000000 /* <asm/signal.h>; glibc keeps it private */
#else
#define INTERNAL_FLAGS 0
#endif

/* ThreadSanitizer's sigaction() installs every action with a full sa_mask
 * and reports that mask back for SIG_DFL and SIG_IGN, where a mask has no
 * effect (no handler runs).  Under TSan only, such masks are not compared. */

static int same_action(const struct sigaction *a, const struct sigaction *b)
{
  /* sa_handler and sa_sigaction share storage: compare the one in use. */
  if ((a->sa_flags & ~INTERNAL_FLAGS) != (b->sa_flags & ~INTERNAL_FLAGS)) return 0;
  if (a->sa_flags & SA_SIGINFO) {
    if (a->sa_sigaction != b->sa_sigaction) return 0;
  } else if (a->sa_handler != b->sa_handler) {
    return 0;
  }
#ifdef UNDER_TSAN
  if (!(a->sa_flags & SA_SIGINFO)
      && (a->sa_handler == SIG_DFL || a->sa_handler == SIG_IGN))
    return 1;
#endif
  return same_sigset(&a->sa_mask, &b->sa_mask);
}

struct signal_state {
  struct sigaction action[NSIG];
  sigset_t mask;
};

static void signal_state_get(struct signal_state *s)
{
  int sig;
  memset(s, 0, sizeof *s);
  for (sig = 1; sig < NSIG; sig++) sigaction(sig, 0, &s->action[sig]);
  pthread_sigmask(SIG_SETMASK, 0, &s->mask);
}

/* 0 when equal; else the first signal whose action differs, or -1 for the
 * mask. */
static int signal_state_diff(const struct signal_state *a, const struct signal_state *b)
{
  int sig;
  for (sig = 1; sig < NSIG; sig++)
    if (!same_action(&a->action[sig], &b->action[sig])) return sig;
  if (!same_sigset(&a->mask, &b->mask)) return -1;
  return 0;
}

static int wait_child(pid_t pid)
{
  int status;
  pid_t r;
  do r = waitpid(pid, &status, 0);
  while (r < 0 && errno == EINTR);
  ck_assert_int_eq(r, pid);
  if (WIFSIGNALED(status))
    ck_abort_msg("child killed by signal %d", WTERMSIG(status));
  ck_assert(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* ---- threads ---- */

#define RACERS 48
static pthread_barrier_t start_line;

struct racer {
  int entry;             /* which entry point comes first */
  long long persecond;
  const char *implementation;
  int not_monotone;
};

static void *race(void *arg)
{
  struct racer *r = arg;
  pthread_barrier_wait(&start_line);
  switch (r->entry % 4) {
    case 0: cpucycles(); break;
    case 1: cpucycles_persecond(); break;
    case 2: cpucycles_implementation(); break;
    default: cpucycles_version(); cpucycles(); break;
  }
  r->not_monotone = monotone_run(20000);
  r->persecond = cpucycles_persecond();
  r->implementation = cpucycles_implementation();
  return 0;
}

START_TEST(threads_race_into_every_entry_point)
{
  pthread_t t[RACERS];
  struct racer r[RACERS];
  int i;
  memset(r, 0, sizeof r);
  pthread_barrier_init(&start_line, 0, RACERS);
  for (i = 0; i < RACERS; i++) {
    r[i].entry = i;
    ck_assert_int_eq(pthread_create(&t[i], 0, race, &r[i]), 0);
  }
  for (i = 0; i < RACERS; i++) pthread_join(t[i], 0);
  pthread_barrier_destroy(&start_line);
  for (i = 0; i < RACERS; i++) {
    ck_assert_int_eq(r[i].not_monotone, 0);
    ck_assert_ptr_eq(r[i].implementation, r[0].implementation);
    ck_assert_int_eq(r[i].persecond, r[0].persecond);
  }
  ck_assert_str_ne(r[0].implementation, "default-zero");
  ck_assert_str_eq(r[0].implementation, cpucycles_implementation());
}
END_TEST

/* ---- fork ---- */

/* What a child checks: it counts by itself, monotone, with the parent's
 * implementation and frequency, and handlers and mask as expected. */
static int child_checks(const char *implementation, long long persecond,
                        const struct signal_state *expected)
{
  struct signal_state now;
  alarm(20); /* a child stuck in the library is killed: CHILD_HUNG */
  if (monotone_run(100000)) return CHILD_NOT_MONOTONE;
  if (implementation && strcmp(cpucycles_implementation(), implementation) != 0)
    return CHILD_OTHER_IMPLEMENTATION;
  if (strcmp(cpucycles_implementation(), "default-zero") == 0)
    return CHILD_DEFAULT_ZERO;
  if (persecond && cpucycles_persecond() != persecond) return CHILD_PERSECOND_CHANGED;
  if (expected) {
    int d;
    signal_state_get(&now);
    /* alarm() above installed nothing; SIGALRM stays default. */
    d = signal_state_diff(expected, &now);
    if (d > 0) return CHILD_HANDLER_CHANGED;
    if (d < 0) return CHILD_MASK_CHANGED;
  }
  /* The child forks in turn: fork handlers registered twice would wait
   * for themselves here (CHILD_HUNG). */
  {
    pid_t grandchild = fork();
    int status;
    if (grandchild < 0) return CHILD_FORK_FAILED;
    if (grandchild == 0) _exit(0);
    while (waitpid(grandchild, &status, 0) < 0)
      if (errno != EINTR) return CHILD_FORK_FAILED;
  }
  return CHILD_OK;
}

START_TEST(fork_after_first_call)
{
  const char *impl = cpucycles_implementation();
  long long persecond = cpucycles_persecond();
  long long before = cpucycles();
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) _exit(child_checks(impl, persecond, 0));
  ck_assert_int_eq(wait_child(pid), CHILD_OK);
  /* and the parent goes on counting */
  ck_assert_int_ge(cpucycles(), before);
  ck_assert_int_eq(monotone_run(10000), 0);
}
END_TEST

START_TEST(fork_before_first_call)
{
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) _exit(child_checks(0, 0, 0));
  ck_assert_int_eq(wait_child(pid), CHILD_OK);
  ck_assert_int_eq(monotone_run(10000), 0);
  ck_assert_str_ne(cpucycles_implementation(), "default-zero");
}
END_TEST

#define SPINNERS 4
static volatile int spinning;

static void *spin(void *arg)
{
  int *bad = arg;
  long long prev = cpucycles(), now;
  while (__atomic_load_n(&spinning, __ATOMIC_RELAXED)) {
    now = cpucycles();
    if (now < prev) *bad = 1;
    prev = now;
  }
  return 0;
}

/* Threads keep calling cpucycles() while the main thread forks: a child
 * of a multi-threaded parent has only the forking thread, and whatever
 * those threads held must not hang or confuse it. */
static void fork_among_spinners(int init_first)
{
  pthread_t t[SPINNERS];
  int bad[SPINNERS] = { 0 };
  const char *impl;
  long long persecond;
  int i, round;

  if (init_first) cpucycles();
  __atomic_store_n(&spinning, 1, __ATOMIC_RELAXED);
  for (i = 0; i < SPINNERS; i++)
    ck_assert_int_eq(pthread_create(&t[i], 0, spin, &bad[i]), 0);
  impl = cpucycles_implementation();
  persecond = cpucycles_persecond();
  for (round = 0; round < 20; round++) {
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) _exit(child_checks(impl, persecond, 0));
    ck_assert_int_eq(wait_child(pid), CHILD_OK);
  }
  __atomic_store_n(&spinning, 0, __ATOMIC_RELAXED);
  for (i = 0; i < SPINNERS; i++) {
    pthread_join(t[i], 0);
    ck_assert_int_eq(bad[i], 0);
  }
}

START_TEST(fork_from_threads_calling_cpucycles)
{
  fork_among_spinners(1);
}
END_TEST

START_TEST(fork_from_threads_racing_into_first_call)
{
  fork_among_spinners(0);
}
END_TEST

/* A fork() in one thread while another thread is in the middle of the
 * probe (crash handlers of the library installed, the first call running):
 * the child must neither hang nor keep the probe's handlers. */
static volatile int first_call_done;

static void *first_call(void *arg)
{
  (void) arg;
  cpucycles();
  __atomic_store_n(&first_call_done, 1, __ATOMIC_RELEASE);
  return 0;
}

/* Waits until the probe in the other thread has replaced the caller's
 * SIGSEGV handler (cpucycles_works is running), or the first call is over,
 * or a round-dependent pause for the rounds that do not spin.  The spin
 * yields: valgrind runs one thread at a time and emulates sigaction()
 * without leaving the running thread, so a bare spin starves the probing
 * thread (a minute per run of this test there, against its time limit). */
static void wait_for_probe(int round)
{
  if (round % 2 == 0) {
    struct sigaction now;
    do {
      sigaction(SIGSEGV, 0, &now);
      if (now.sa_sigaction != user_action && now.sa_handler != user_handler) return;
      sched_yield();
    } while (!__atomic_load_n(&first_call_done, __ATOMIC_ACQUIRE));
  } else {
    struct timespec pause = { 0, (long) (round % 40) * 10000L }; /* 0..0.4 ms */
    nanosleep(&pause, 0);
  }
}

START_TEST(fork_during_another_threads_first_call)
{
  struct signal_state expected;
  int round;

#ifdef UNDER_TSAN
  /* ThreadSanitizer's fork() holds its internal locks while fork handlers
   * run (LLVM 14); the library's prepare handler waits for the probing
   * thread, which needs those locks: a deadlock of the instrumentation
   * (compare compiler-rt's test/tsan/pthread_atfork_deadlock*.c).  The
   * plain, ASan and valgrind runs cover this test. */
  fprintf(stderr, "fork during the probe: not run under ThreadSanitizer\n");
  return;
#endif
  install_user_handlers();
  signal_state_get(&expected);
  /* Each round needs a fresh library: do it in a fresh process. */
  for (round = 0; round < 40; round++) {
    pid_t tester = fork();
    ck_assert_int_ge(tester, 0);
    if (tester == 0) {
      pthread_t t;
      pid_t pid;
      int status;
      if (pthread_create(&t, 0, first_call, 0) != 0) _exit(2);
      /* Detached: a finished thread that is not joined yet when fork()
       * copies the process would be a "thread leak" in the child to
       * ThreadSanitizer. */
      pthread_detach(t);
      wait_for_probe(round);
      pid = fork();
      if (pid < 0) _exit(3);
      if (pid == 0) _exit(child_checks(0, 0, &expected));
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
      while (!__atomic_load_n(&first_call_done, __ATOMIC_ACQUIRE)) sched_yield();
      if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) _exit(CHILD_HUNG);
      if (!WIFEXITED(status)) _exit(4);
      _exit(WEXITSTATUS(status));
    }
    ck_assert_int_eq(wait_child(tester), CHILD_OK);
  }
}
END_TEST

/* The fork handlers are registered once, when the library is loaded: none
 * during the first call.  glibc's pthread_atfork() (linked into the
 * library from libc_nonshared.a) registers through __register_atfork(),
 * which this program interposes (exported: visibility default) to count the registrations and, on the
 * first one made during the first call, to fork right there: a child in
 * that window used to make the first call again, register the handlers a
 * second time and wait forever in its own next fork(). */
/* Not under ThreadSanitizer, whose runtime registers fork handlers of its
 * own before it can serve dlsym(). */
#if defined(__GLIBC__) && defined(__linux__) && !defined(UNDER_TSAN)
#include <dlfcn.h>
#define INTERPOSE_REGISTER_ATFORK 1
static volatile int watching_registrations, registrations_seen;
static volatile int window_child_status = -1;

int __register_atfork(void (*prepare)(void), void (*parent)(void),
                      void (*child)(void), void *dso)
  __attribute__((visibility("default")));
int __register_atfork(void (*prepare)(void), void (*parent)(void),
                      void (*child)(void), void *dso)
{
  static int (*real)(void (*)(void), void (*)(void), void (*)(void), void *);
  int r;
  if (!real) *(void **) &real = dlsym(RTLD_NEXT, "__register_atfork");
  r = real(prepare, parent, child, dso);
  if (watching_registrations) {
    pid_t pid;
    int status;
    registrations_seen++;
    watching_registrations = 0;
    pid = fork();
    if (pid == 0) _exit(child_checks(0, 0, 0));
    if (pid > 0 && waitpid(pid, &status, 0) == pid) window_child_status = status;
  }
  return r;
}
#endif

START_TEST(fork_handlers_registered_once_not_in_the_first_call)
{
#ifdef INTERPOSE_REGISTER_ATFORK
  registrations_seen = 0;
  watching_registrations = 1;
  cpucycles();
  watching_registrations = 0;
  ck_assert_msg(registrations_seen == 0, "fork handlers registered during the first call");
  ck_assert_int_eq(window_child_status, -1);
  /* and the process forks as usual */
  {
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) _exit(child_checks(0, 0, 0));
    ck_assert_int_eq(wait_child(pid), CHILD_OK);
  }
#endif
}
END_TEST

/* ---- cancellation ---- */

/* A thread cancelled (deferred) during its first call: the first call
 * finishes, the cancellation acts at the thread's next cancellation point,
 * and the library is left usable: later first calls of other entry
 * points and fork() do not wait for a lock the dead thread held. */
static volatile int cancel_ready, cancel_sent, first_call_returned;

static void *first_call_to_be_cancelled(void *arg)
{
  int old;
  (void) arg;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
  __atomic_store_n(&cancel_ready, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&cancel_sent, __ATOMIC_ACQUIRE)) sched_yield();
  /* Deferred, and pending from now on: the first cancellation point
   * would act.  The first call reads files (cancellation points). */
  pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
  cpucycles();
  __atomic_store_n(&first_call_returned, 1, __ATOMIC_RELEASE);
  pthread_testcancel();
  return 0;
}

START_TEST(cancelled_first_call_leaves_nothing_held)
{
  pthread_t t;
  void *result = 0;
  pid_t pid;
  int old_type;

  alarm(60); /* a wait for a dead thread's lock ends the test */
  pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old_type);
  ck_assert_int_eq(pthread_create(&t, 0, first_call_to_be_cancelled, 0), 0);
  while (!__atomic_load_n(&cancel_ready, __ATOMIC_ACQUIRE)) sched_yield();
  ck_assert_int_eq(pthread_cancel(t), 0);
  __atomic_store_n(&cancel_sent, 1, __ATOMIC_RELEASE);
  ck_assert_int_eq(pthread_join(t, &result), 0);
  ck_assert(result == PTHREAD_CANCELED);
  ck_assert_msg(__atomic_load_n(&first_call_returned, __ATOMIC_ACQUIRE),
                "the thread was cancelled inside its first call");
  ck_assert_str_ne(cpucycles_implementation(), "default-zero");
  ck_assert_int_eq(monotone_run(1000), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) _exit(child_checks(0, 0, 0));
  ck_assert_int_eq(wait_child(pid), CHILD_OK);
  alarm(0);
}
END_TEST

/* ---- RDTSC disabled for the process ---- */

/* prctl(PR_SET_TSC, PR_TSC_SIGSEGV) makes RDTSC fault, and with it the
 * vDSO's clocks where the clocksource is the TSC; the system calls still
 * answer, and the OS clocks must keep counting through them. */
#if defined(__linux__) && (defined(__x86_64__) || defined(__i386__))
#include <sys/prctl.h>
#endif

static int child_without_tsc(const char *counter)
{
#if defined(PR_SET_TSC) && defined(PR_TSC_SIGSEGV)
  alarm(20);
  if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0) return 77;
  if (counter) setenv("CPUCYCLES_COUNTER", counter, 1);
  if (monotone_run(1000)) return CHILD_NOT_MONOTONE;
  if (counter && strcmp(cpucycles_implementation(), counter) != 0)
    return CHILD_OTHER_IMPLEMENTATION;
  if (strcmp(cpucycles_implementation(), "default-zero") == 0) return CHILD_DEFAULT_ZERO;
  return CHILD_OK;
#else
  (void) counter;
  return 77;
#endif
}

START_TEST(os_clocks_survive_rdtsc_disabled)
{
  const char *counters[] = { 0, "default-monotonic", "default-gettimeofday" };
  unsigned i;
#ifdef UNDER_SANITIZER
  /* The runtime's own clock reads would fault: ASan and TSan builds leave
   * this one to the plain and valgrind runs. */
  fprintf(stderr, "RDTSC disabled: not run under a sanitizer\n");
  return;
#endif
  for (i = 0; i < sizeof counters / sizeof counters[0]; i++) {
    pid_t pid = fork();
    int code;
    ck_assert_int_ge(pid, 0);
    if (pid == 0) _exit(child_without_tsc(counters[i]));
    code = wait_child(pid);
    if (code == 77) return; /* no such switch here */
    ck_assert_msg(code == CHILD_OK, "%s: child code %d",
                  counters[i] ? counters[i] : "the probe's choice", code);
  }
}
END_TEST

/* ---- signal handlers and mask ---- */

static void probe_leaves_signals_alone(int blocked)
{
  struct signal_state before, after;
  int d;

  install_user_handlers();
  signal(SIGBUS, SIG_IGN); /* and one ignored */
  if (blocked) {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGILL);
    sigaddset(&mask, SIGSEGV);
    sigaddset(&mask, SIGUSR1);
    sigaddset(&mask, SIGALRM);
    ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, &mask, 0), 0);
  }
  signal_state_get(&before);
  cpucycles();
  signal_state_get(&after);
  d = signal_state_diff(&before, &after);
  ck_assert_msg(d == 0, d > 0 ? "handler of signal %d changed" : "mask changed (%d)", d);
  ck_assert_str_ne(cpucycles_implementation(), "default-zero");
}

START_TEST(signal_handlers_and_mask_as_before)
{
  probe_leaves_signals_alone(0);
}
END_TEST

START_TEST(signal_handlers_and_blocked_mask_as_before)
{
  probe_leaves_signals_alone(1);
}
END_TEST

START_TEST(default_handlers_as_before)
{
  struct signal_state before, after;
  signal_state_get(&before);
  cpucycles();
  signal_state_get(&after);
  ck_assert_int_eq(signal_state_diff(&before, &after), 0);
}
END_TEST

/* ---- descriptors ---- */

#define MAX_FDS 1024

/* Marks the open descriptors of this process in open[]; the directory's
 * own descriptor is left out. */
static void open_fds(char open[MAX_FDS])
{
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  memset(open, 0, MAX_FDS);
  ck_assert_ptr_nonnull(d);
  while ((e = readdir(d))) {
    int fd;
    if (e->d_name[0] == '.') continue;
    fd = atoi(e->d_name);
    if (fd == dirfd(d) || fd < 0 || fd >= MAX_FDS) continue;
    open[fd] = 1;
  }
  closedir(d);
}

static void descriptors_after_first_call(const char *override)
{
  char before[MAX_FDS], after[MAX_FDS];
  int fd, added = 0;

  if (access("/proc/self/fd", R_OK) != 0) return; /* not Linux: nothing to scan */
  if (override) setenv("CPUCYCLES_COUNTER", override, 1);
  open_fds(before);
  cpucycles();
  cpucycles_persecond();
  open_fds(after);
  for (fd = 0; fd < MAX_FDS; fd++) {
    if (before[fd] && !after[fd]) ck_abort_msg("descriptor %d was closed", fd);
    if (!before[fd] && after[fd]) {
      int flags = fcntl(fd, F_GETFD);
      ck_assert_msg(flags >= 0 && (flags & FD_CLOEXEC),
                    "descriptor %d left by %s is not close-on-exec", fd,
                    cpucycles_implementation());
      added++;
    }
  }
  /* Only a perf counter keeps a descriptor: one per thread that read it. */
  if (strstr(cpucycles_implementation(), "perf") == 0
      && strcmp(cpucycles_implementation(), "amd64-perfpmcff") != 0)
    ck_assert_msg(added == 0, "%d descriptors left by %s", added,
                  cpucycles_implementation());
  else
    ck_assert_int_le(added, 1);
}

START_TEST(descriptors_only_the_chosen_counters)
{
  descriptors_after_first_call(0);
}
END_TEST

/* Named counters that open descriptors: when the kernel refuses them the
 * probe falls back to the others, and nothing may stay open. */
START_TEST(descriptors_of_named_perfevent)
{
  descriptors_after_first_call("default-perfevent");
}
END_TEST

START_TEST(descriptors_of_named_perfpmc)
{
  descriptors_after_first_call("amd64-perfpmc");
}
END_TEST

/* ---- the hot path in signal handlers ---- */

static volatile sig_atomic_t in_handler_bad, handler_calls;
static volatile long long last_in_handler, last_in_main;

/* SIGALRM and SIGPROF share this handler and interrupt each other.  The
 * bounds are read before the counter: a handler nested after `a` was read
 * publishes a later value, which `a` need not exceed.  (A nested handler's
 * later last_in_handler may also be overwritten by the outer one's earlier
 * b: a weaker bound, still a true one.) */
static void timer_handler(int sig)
{
  int saved = errno;
  long long published_main = last_in_main; /* completed before the signal */
  long long published_handler = last_in_handler;
  long long a = cpucycles(), b = cpucycles();
  (void) sig;
  if (b < a || a < published_handler || a < published_main) in_handler_bad = 1;
  last_in_handler = b;
  handler_calls++;
  errno = saved;
}

START_TEST(hot_path_from_signal_handlers)
{
  struct sigaction a;
  struct itimerval every = { { 0, 500 }, { 0, 500 } }, off;
  struct timespec start, now;
  long long prev;
  long main_calls = 0;

  /* The first call is the probe: not async-signal-safe (a mutex),
   * so it is made before any handler may run (doc/security.md). */
  prev = cpucycles();
  memset(&a, 0, sizeof a);
  a.sa_handler = timer_handler;
  sigemptyset(&a.sa_mask);
  a.sa_flags = SA_RESTART;
  ck_assert_int_eq(sigaction(SIGALRM, &a, 0), 0);
  ck_assert_int_eq(sigaction(SIGPROF, &a, 0), 0);
  ck_assert_int_eq(setitimer(ITIMER_REAL, &every, 0), 0);
  ck_assert_int_eq(setitimer(ITIMER_PROF, &every, 0), 0);
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    int i;
    for (i = 0; i < 1000; i++) {
      long long t = cpucycles();
      ck_assert(t >= prev);
      prev = t;
      last_in_main = t;
      main_calls++;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec)
           < 500000000L && handler_calls < 2000);
  memset(&off, 0, sizeof off);
  setitimer(ITIMER_REAL, &off, 0);
  setitimer(ITIMER_PROF, &off, 0);
  ck_assert_int_eq(in_handler_bad, 0);
  ck_assert_int_gt(handler_calls, 20);
  ck_assert_int_gt(main_calls, 1000);
}
END_TEST

/* ---- helper modes ---- */

/* "env": what tests/check-setuid.sh looks at.  "minimal": the smallest
 * use of the library, for valgrind's heap summary.  Output with write(2):
 * stdio would allocate its buffer. */
static int helper_main(const char *mode)
{
  char line[256];
  if (strcmp(mode, "env") == 0) {
    snprintf(line, sizeof line, "secure %lu ruid %d euid %d implementation %s\n",
             getauxval(AT_SECURE), (int) getuid(), (int) geteuid(),
             cpucycles_implementation());
    say(line);
    return 0;
  }
  if (strcmp(mode, "minimal") == 0) {
    long i;
    int bad = monotone_run(100000);
    for (i = 0; i < 1000; i++) cpucycles();
    say("implementation ");
    say(cpucycles_implementation());
    say(" version ");
    say(cpucycles_version());
    say(cpucycles_persecond() > 0 && !bad ? " ok\n" : " bad\n");
    return bad;
  }
  say("usage: test-reliability [env|minimal]\n");
  return 2;
}

int main(int argc, char **argv)
{
  Suite *s;
  TCase *t;

  if (argc > 1) return helper_main(argv[1]);
  unsetenv("CPUCYCLES_COUNTER");
  s = suite_create("reliability");
  t = tcase_create("public");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, threads_race_into_every_entry_point);
  tcase_add_test(t, fork_after_first_call);
  tcase_add_test(t, fork_before_first_call);
  tcase_add_test(t, fork_from_threads_calling_cpucycles);
  tcase_add_test(t, fork_from_threads_racing_into_first_call);
  tcase_add_test(t, fork_during_another_threads_first_call);
  tcase_add_test(t, fork_handlers_registered_once_not_in_the_first_call);
  tcase_add_test(t, cancelled_first_call_leaves_nothing_held);
  tcase_add_test(t, os_clocks_survive_rdtsc_disabled);
  tcase_add_test(t, signal_handlers_and_mask_as_before);
  tcase_add_test(t, signal_handlers_and_blocked_mask_as_before);
  tcase_add_test(t, default_handlers_as_before);
  tcase_add_test(t, descriptors_only_the_chosen_counters);
  tcase_add_test(t, descriptors_of_named_perfevent);
  tcase_add_test(t, descriptors_of_named_perfpmc);
  tcase_add_test(t, hot_path_from_signal_handlers);
  suite_add_tcase(s, t);
  return run_suite(s);
}
