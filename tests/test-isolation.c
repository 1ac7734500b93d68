/* What the library never does, watched from inside the process
 * (doc/security.md):
 *  - no heap: malloc and friends are interposed in this executable (or,
 *    under a sanitizer, counted with the sanitizer's allocator hooks) and
 *    must not be called between two points around the first call, the
 *    other entry points and 10^5 reads, in this thread and in another;
 *  - the environment: only CPUCYCLES_COUNTER and cpucyclespersecond are
 *    looked up, with secure_getenv where the libc has it, and never PATH;
 *  - no process, no inheritable descriptor: in a fresh child under a
 *    seccomp filter, fork/vfork/clone/execve and an open without
 *    O_CLOEXEC (and pipe, dup, socket) trap; the first call must trap
 *    nothing.
 *
 * Check runs each test in its own process, so each makes the first call. */
#include <config.h>
#include <check.h>
#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cpucycles.h"
#include "checked-by.h"



/* ---- counting allocations ---- */

/* Interposed functions must be exported from the executable: the build
 * compiles with -fvisibility=hidden, which would keep them to ourselves. */
#define INTERPOSED __attribute__((visibility("default")))

static volatile int counting;
static long allocations; /* touched with __atomic: threads allocate too */

static void counted(void)
{
  if (counting) __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
}

#if defined(UNDER_SANITIZER) && defined(HAVE_SANITIZER_ALLOCATOR_INTERFACE_H)
/* The sanitizer owns malloc; it reports every allocation to these hooks. */
#include <sanitizer/allocator_interface.h>
static void on_malloc(const volatile void *p, size_t size)
{
  (void) p; (void) size;
  counted();
}
static void on_free(const volatile void *p)
{
  (void) p;
  counted();
}
static int start_watching_heap(void)
{
  static int installed;
  if (!installed) installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
  return installed ? 0 : -1;
}
#elif defined(UNDER_SANITIZER)
/* gcc ships no <sanitizer/allocator_interface.h> (configure checks): the
 * sanitizer owns malloc and there is no hook to count with. */
static int start_watching_heap(void) { (void) counted; return -1; }
#elif defined(__GLIBC__)
/* Interposed here, forwarded to glibc's allocator: every caller in the
 * process, libcpucycles and glibc itself included, comes through these. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);
/* glibc declares these two in <malloc.h> only. */
void *memalign(size_t, size_t);
void *pvalloc(size_t);

INTERPOSED void *malloc(size_t n) { counted(); return __libc_malloc(n); }
INTERPOSED void *calloc(size_t n, size_t m) { counted(); return __libc_calloc(n, m); }
INTERPOSED void *realloc(void *p, size_t n) { counted(); return __libc_realloc(p, n); }
INTERPOSED void free(void *p) { if (p) counted(); __libc_free(p); }
INTERPOSED void *memalign(size_t a, size_t n) { counted(); return __libc_memalign(a, n); }
INTERPOSED void *aligned_alloc(size_t a, size_t n) { counted(); return __libc_memalign(a, n); }
INTERPOSED void *valloc(size_t n) { counted(); return __libc_valloc(n); }
INTERPOSED void *pvalloc(size_t n) { counted(); return __libc_pvalloc(n); }
INTERPOSED int posix_memalign(void **out, size_t a, size_t n)
{
  void *p;
  counted();
  if (a < sizeof(void *) || (a & (a - 1)) != 0) return EINVAL;
  p = __libc_memalign(a, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
/* Under valgrind, memcheck replaces malloc and strdup in libc and the
 * calls never reach these: valgrind's own heap summary is the proof there
 * (tests/check-sanitizers.sh). */
static int start_watching_heap(void)
{
  if (RUNNING_ON_VALGRIND) {
    fprintf(stderr, "under valgrind: heap counted by valgrind, not here\n");
    return -1;
  }
  return 0;
}
#else
static int start_watching_heap(void) { return -1; }
#endif

/* The watch itself must see an allocation made inside libc (strdup calls
 * malloc from libc.so): otherwise the zero counts below prove nothing. */
static void check_the_watch_sees_libc(void)
{
  char *volatile p;
  long seen;
  __atomic_store_n(&allocations, 0, __ATOMIC_RELAXED);
  counting = 1;
  p = strdup("x");
  free(p);
  counting = 0;
  seen = __atomic_load_n(&allocations, __ATOMIC_RELAXED);
  __atomic_store_n(&allocations, 0, __ATOMIC_RELAXED);
  ck_assert_msg(seen >= 1, "the heap watch missed libc's own malloc");
}

/* ---- watching the environment ---- */

#define NAMES 16
static char names_asked[NAMES][64];
static int secure_asked[NAMES];
static int names_count;
static volatile int watching_env;

extern char **environ;

static char *lookup(const char *name)
{
  size_t len = strlen(name);
  char **e;
  for (e = environ; e && *e; e++)
    if (strncmp(*e, name, len) == 0 && (*e)[len] == '=') return *e + len + 1;
  return 0;
}

static void note(const char *name, int secure)
{
  if (!watching_env || names_count >= NAMES) return;
  snprintf(names_asked[names_count], sizeof names_asked[0], "%s", name);
  secure_asked[names_count] = secure;
  names_count++;
}

/* Interposed: the library's secure_getenv() and getenv() land here. */
INTERPOSED char *getenv(const char *name)
{
  note(name, 0);
  return lookup(name);
}

INTERPOSED char *secure_getenv(const char *name)
{
  note(name, 1);
  if (getauxval(AT_SECURE)) return 0;
  return lookup(name);
}

/* ---- tests: heap ---- */

/* No Check assertion inside a counting window: Check itself allocates
 * (every assertion that passes sends its location to the runner). */
struct results {
  const char *version, *implementation;
  long long persecond;
  long reads;
};

static void all_entry_points(struct results *r)
{
  long i;
  long long prev = cpucycles();
  r->version = cpucycles_version();
  r->implementation = cpucycles_implementation();
  r->persecond = cpucycles_persecond();
  for (i = 0; i < 100000; i++) {
    long long now = cpucycles();
    if (now < prev) break;
    prev = now;
  }
  r->reads = i;
}

static void check_results(const struct results *r)
{
  ck_assert_ptr_nonnull(r->version);
  ck_assert_ptr_nonnull(r->implementation);
  ck_assert_int_gt(r->persecond, 0);
  ck_assert_int_eq(r->reads, 100000);
}

static pthread_barrier_t go;
static volatile int other_thread_done;

/* A second thread's first reads: per-thread counters set up there.  The
 * thread's own start and exit (which may allocate, in glibc or in a
 * sanitizer's runtime) happen outside the counting window: three
 * barriers: started, go, counting over. */
static void *other_thread(void *arg)
{
  long i;
  (void) arg;
  pthread_barrier_wait(&go);
  pthread_barrier_wait(&go);
  for (i = 0; i < 10000; i++) cpucycles();
  cpucycles_implementation();
  __atomic_store_n(&other_thread_done, 1, __ATOMIC_RELEASE);
  pthread_barrier_wait(&go);
  return 0;
}

START_TEST(no_heap_in_first_call_and_hot_path)
{
  pthread_t t;
  long seen;
  struct results r;

  if (start_watching_heap() != 0) {
    fprintf(stderr, "no way to watch the heap with this libc: not checked\n");
    return;
  }
  check_the_watch_sees_libc();
  /* The thread exists before counting starts: creating it allocates. */
  pthread_barrier_init(&go, 0, 2);
  ck_assert_int_eq(pthread_create(&t, 0, other_thread, 0), 0);
  pthread_barrier_wait(&go); /* the thread has started */
  __atomic_store_n(&allocations, 0, __ATOMIC_RELAXED);
  counting = 1;
  all_entry_points(&r);
  pthread_barrier_wait(&go);
  while (!__atomic_load_n(&other_thread_done, __ATOMIC_ACQUIRE)) sched_yield();
  counting = 0;
  seen = __atomic_load_n(&allocations, __ATOMIC_RELAXED);
  pthread_barrier_wait(&go); /* now it may exit */
  pthread_join(t, 0);
  pthread_barrier_destroy(&go);
  check_results(&r);
  ck_assert_msg(seen == 0, "%ld heap calls with %s", seen, cpucycles_implementation());
}
END_TEST

START_TEST(no_heap_with_tracing)
{
  int saved = dup(1), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  long seen;

  if (start_watching_heap() != 0) return;
  check_the_watch_sees_libc();
  ck_assert_int_ge(null, 0);
  dup2(null, 1);
  cpucycles_tracesetup();
  counting = 1;
  cpucycles();
  counting = 0;
  dup2(saved, 1);
  close(saved);
  close(null);
  seen = __atomic_load_n(&allocations, __ATOMIC_RELAXED);
  ck_assert_msg(seen == 0, "%ld heap calls while tracing", seen);
}
END_TEST

/* The override path too: a named counter, a missing one, garbage. */
static void no_heap_with_override(const char *name)
{
  long seen;
  struct results r;
  if (start_watching_heap() != 0) return;
  check_the_watch_sees_libc();
  setenv("CPUCYCLES_COUNTER", name, 1);
  counting = 1;
  all_entry_points(&r);
  counting = 0;
  seen = __atomic_load_n(&allocations, __ATOMIC_RELAXED);
  check_results(&r);
  ck_assert_msg(seen == 0, "%ld heap calls with CPUCYCLES_COUNTER=%s", seen, name);
}

START_TEST(no_heap_with_named_counter)
{
  no_heap_with_override("default-monotonic");
}
END_TEST

START_TEST(no_heap_with_unknown_counter)
{
  no_heap_with_override("no-such-counter");
}
END_TEST

/* ---- tests: environment ---- */

START_TEST(only_its_own_variables_never_path)
{
  int i;
  names_count = 0;
  watching_env = 1;
  cpucycles();
  cpucycles_persecond();
  cpucycles_implementation();
  watching_env = 0;
  for (i = 0; i < names_count; i++) {
    ck_assert_msg(strcmp(names_asked[i], "CPUCYCLES_COUNTER") == 0
                  || strcmp(names_asked[i], "cpucyclespersecond") == 0,
                  "the library asked for %s", names_asked[i]);
#ifdef HAVE_SECURE_GETENV
    ck_assert_msg(secure_asked[i], "%s read with getenv, not secure_getenv",
                  names_asked[i]);
#endif
  }
  ck_assert_int_ge(names_count, 1); /* the watch saw the library at all */
}
END_TEST

/* ---- tests: processes and descriptors, under seccomp ---- */

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#define WITH_SECCOMP 1

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#else
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LOW(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#else
#define ARG_LOW(n) (offsetof(struct seccomp_data, args) + 8 * (n) + 4)
#endif

static volatile sig_atomic_t traps;
static volatile int trapped[8];

static void on_sigsys(int sig, siginfo_t *info, void *context)
{
  ucontext_t *uc = context;
  (void) sig;
  if (traps < 8) trapped[traps] = info->si_syscall;
  traps++;
  /* The call did not happen: make it fail the way an unknown call does. */
#if defined(__x86_64__)
  uc->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
#else
  uc->uc_mcontext.regs[0] = (unsigned long long) -ENOSYS;
#endif
}

#define TRAP_IF(nr) \
  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
  BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP)

/* Trap what the library must never do: create a process or thread, run
 * a program, open a descriptor that survives exec. */
static int forbid(void)
{
  struct sock_filter filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef __NR_fork
    TRAP_IF(__NR_fork),
#endif
#ifdef __NR_vfork
    TRAP_IF(__NR_vfork),
#endif
    TRAP_IF(__NR_clone),
#ifdef __NR_clone3
    TRAP_IF(__NR_clone3),
#endif
    TRAP_IF(__NR_execve),
#ifdef __NR_execveat
    TRAP_IF(__NR_execveat),
#endif
#ifdef __NR_open
    TRAP_IF(__NR_open),
#endif
#ifdef __NR_openat2
    TRAP_IF(__NR_openat2),
#endif
#ifdef __NR_pipe
    TRAP_IF(__NR_pipe),
#endif
    TRAP_IF(__NR_pipe2),
#ifdef __NR_dup
    TRAP_IF(__NR_dup),
#endif
#ifdef __NR_dup2
    TRAP_IF(__NR_dup2),
#endif
    TRAP_IF(__NR_dup3),
    TRAP_IF(__NR_socket),
    TRAP_IF(__NR_socketpair),
    /* openat: allowed only with O_CLOEXEC */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 3),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(2)),
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CLOEXEC, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog;
  struct sigaction a;

  prog.len = (unsigned short) (sizeof filter / sizeof filter[0]);
  prog.filter = filter;

  memset(&a, 0, sizeof a);
  a.sa_sigaction = on_sigsys;
  a.sa_flags = SA_SIGINFO;
  sigemptyset(&a.sa_mask);
  if (sigaction(SIGSYS, &a, 0) != 0) return -1;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) return -1;
  return 0;
}
#endif

START_TEST(no_process_no_inheritable_descriptor)
{
#ifdef WITH_SECCOMP
  int report[2];
  pid_t pid;
  int status;
  char buf[256];
  ssize_t n;

  if (RUNNING_ON_VALGRIND) {
    fprintf(stderr, "seccomp traps under valgrind: not checked\n");
    return;
  }
  ck_assert_int_eq(pipe2(report, O_CLOEXEC), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int len, i;
    /* A stray open here is the test's, not the library's: check the
     * filter traps one before trusting it to trap the library's. */
    if (forbid() != 0) {
      len = snprintf(buf, sizeof buf, "seccomp unavailable: %s\n", strerror(errno));
      if (write(report[1], buf, (size_t) len) < 0) {}
      _exit(77);
    }
    if (syscall(__NR_openat, AT_FDCWD, "/dev/null", O_RDONLY) != -1 || traps != 1) {
      len = snprintf(buf, sizeof buf, "filter did not trap an open without O_CLOEXEC (%d)\n",
                     (int) traps);
      if (write(report[1], buf, (size_t) len) < 0) {}
      _exit(2);
    }
    {
      int fd = (int) syscall(__NR_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd < 0 || traps != 1) _exit(3);
      close(fd);
    }
    traps = 0;
    cpucycles();
    cpucycles_persecond();
    cpucycles_implementation();
    len = snprintf(buf, sizeof buf, "traps %d:", (int) traps);
    for (i = 0; i < traps && i < 8; i++)
      len += snprintf(buf + len, sizeof buf - (size_t) len, " syscall %d", trapped[i]);
    len += snprintf(buf + len, sizeof buf - (size_t) len, " (%s)\n", cpucycles_implementation());
    if (write(report[1], buf, (size_t) len) < 0) {}
    _exit(traps ? 1 : 0); /* _exit: no exit handlers (LSan clones) */
  }
  close(report[1]);
  n = read(report[0], buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = 0;
  close(report[0]);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  ck_assert_msg(WIFEXITED(status), "child died: %s", buf);
  if (WEXITSTATUS(status) == 77) {
    fprintf(stderr, "%s", buf);
    return;
  }
  ck_assert_msg(WEXITSTATUS(status) == 0, "%s", buf);
#else
  fprintf(stderr, "no seccomp filter for this system: not checked\n");
#endif
}
END_TEST

int main(void)
{
  Suite *s = suite_create("isolation");
  TCase *t = tcase_create("never");

  unsetenv("CPUCYCLES_COUNTER");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, no_heap_in_first_call_and_hot_path);
  tcase_add_test(t, no_heap_with_tracing);
  tcase_add_test(t, no_heap_with_named_counter);
  tcase_add_test(t, no_heap_with_unknown_counter);
  tcase_add_test(t, only_its_own_variables_never_path);
  tcase_add_test(t, no_process_no_inheritable_descriptor);
  suite_add_tcase(s, t);
  return run_suite(s);
}
