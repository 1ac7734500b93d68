/* The library in a plug-in host (doc/security.md, "Unloading" and "Static
 * TLS"): one thread loads the library by path, calls it and unloads it, in
 * a loop, while the main thread forks children that only end.  The
 * host and every child must survive, and nothing may hang: each test runs
 * in a process of its own (Check's fork mode) under alarm(), so a hang
 * ends as a failure.  And a fresh copy's first call takes no heap where
 * no perf event opens.
 *
 * The library is dlopened from the build directory (LIBRARY); the test
 * program does not link it. */
#include <config.h>
#include <check.h>
#include "checked-by.h"
#include "check-run.h"
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/perf_event.h>
#endif

#define FORKS 2000
#define COPIES 64
#define BOUND 240 /* seconds: a hang fails (SIGALRM); valgrind takes 82 s for all */

static volatile int loading_done;
static volatile int in_first_call; /* the loader's first call is running */

typedef long long cycles_fn(void);

static void *load_call_unload(const char *path, int first_call_flag)
{
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  cycles_fn **cycles;
  if (!h) return 0;
  *(void **) &cycles = dlsym(h, "cpucycles");
  if (cycles) {
    if (first_call_flag) __atomic_store_n(&in_first_call, 1, __ATOMIC_RELEASE);
    (*cycles)();
    if (first_call_flag) __atomic_store_n(&in_first_call, 0, __ATOMIC_RELEASE);
  }
  dlclose(h);
  return h;
}

/* The same path, again and again, until the forks are done. */
static void *loader_same_path(void *unused)
{
  (void) unused;
  while (!__atomic_load_n(&loading_done, __ATOMIC_ACQUIRE))
    if (!load_call_unload(LIBRARY, 0)) return (void *) 1;
  return 0;
}

/* Fork count children while the loader runs; each must reach its code and
 * end itself (SIGKILL: no exit-time work, which under valgrind would be a
 * leak check that counts the other thread's dlopen in flight as lost).
 * With wait_first_call, each fork waits until the loader is in a first
 * call. */
static void fork_children(int count, int wait_first_call)
{
  int i, status;
  for (i = 0; i < count && !__atomic_load_n(&loading_done, __ATOMIC_ACQUIRE); i++) {
    pid_t pid;
    if (wait_first_call)
      while (!__atomic_load_n(&in_first_call, __ATOMIC_ACQUIRE) &&
             !__atomic_load_n(&loading_done, __ATOMIC_ACQUIRE))
        sched_yield();
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
      kill(getpid(), SIGKILL);
      _exit(1);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "child %d: status %#x", i, status);
  }
}

/* ThreadSanitizer's runtime forks a threaded process that dlopens and
 * dlcloses poorly (seen: fork() failing, a run timing out): the fork cases
 * are left to the plain, AddressSanitizer and valgrind runs. */
static int skipped_under_tsan(void)
{
#ifdef UNDER_TSAN
  fprintf(stderr, "fork while unloading: not run under ThreadSanitizer\n");
  return 1;
#else
  return 0;
#endif
}

START_TEST(fork_while_another_thread_unloads)
{
  pthread_t t;
  void *r;
  if (skipped_under_tsan()) return;
  alarm(BOUND);
  ck_assert_int_eq(pthread_create(&t, 0, loader_same_path, 0), 0);
  fork_children(FORKS, 0);
  __atomic_store_n(&loading_done, 1, __ATOMIC_RELEASE);
  ck_assert_int_eq(pthread_join(t, &r), 0);
  ck_assert_msg(r == 0, "dlopen %s: %s", LIBRARY, dlerror());
}
END_TEST

/* Copies of the library under names of their own: each is a fresh copy,
 * whose first call runs when the loader calls it (also where a dlclose
 * leaves a copy loaded). */
static char copy_dir[256];

static void copy_path(int n, char *path, size_t size)
{
  snprintf(path, size, "%s/copy-%d.so", copy_dir, n);
}

static void make_copies(void)
{
  static char image[1 << 22];
  const char *tmp = getenv("TMPDIR");
  char path[512];
  ssize_t len;
  int fd, n;
  snprintf(copy_dir, sizeof copy_dir, "%s/plugin-host-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  ck_assert(mkdtemp(copy_dir) != 0);
  fd = open(LIBRARY, O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  len = read(fd, image, sizeof image);
  close(fd);
  ck_assert(len > 0 && len < (ssize_t) sizeof image);
  for (n = 0; n < COPIES; n++) {
    copy_path(n, path, sizeof path);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, image, (size_t) len), len);
    close(fd);
  }
}

static void remove_copies(void)
{
  char path[512];
  int n;
  for (n = 0; n < COPIES; n++) {
    copy_path(n, path, sizeof path);
    unlink(path);
  }
  rmdir(copy_dir);
}

static void *loader_fresh_copies(void *unused)
{
  char path[512];
  int n;
  (void) unused;
  for (n = 0; n < COPIES; n++) {
    copy_path(n, path, sizeof path);
    if (!load_call_unload(path, 1)) return (void *) 1;
  }
  __atomic_store_n(&loading_done, 1, __ATOMIC_RELEASE);
  return 0;
}

START_TEST(fork_during_first_call_of_a_copy_being_unloaded)
{
  pthread_t t;
  void *r;
  if (skipped_under_tsan()) return;
  alarm(BOUND);
  make_copies();
  ck_assert_int_eq(pthread_create(&t, 0, loader_fresh_copies, 0), 0);
  fork_children(1 << 30, 1);
  ck_assert_int_eq(pthread_join(t, &r), 0);
  remove_copies();
  ck_assert_msg(r == 0, "dlopen: %s", dlerror());
}
END_TEST

/* Whether this thread can open a hardware cycles event (user mode): where
 * it can, the library may, and its thread-locals are then allocated. */
static int perf_event_opens(void)
{
#if defined(__linux__) && defined(SYS_perf_event_open)
  struct perf_event_attr attr;
  int fd;
  memset(&attr, 0, sizeof attr);
  attr.type = PERF_TYPE_HARDWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  fd = (int) syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd < 0) return 0;
  close(fd);
  return 1;
#else
  return 0;
#endif
}

/* The heap in use, as glibc counts it. */
static size_t heap_in_use(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
  return mallinfo2().uordblks;
#else
  return 0;
#endif
}

/* A second, fresh copy (its own namespace) after a first one loaded, called
 * and unloaded: the first copy's thread-locals may have taken glibc's
 * optional static TLS, so the second's would come from the heap (the
 * dynamic linker's malloc) on the thread's first touch.  Where no perf
 * event opens, the first call touches none. */
START_TEST(fresh_copys_first_call_takes_no_heap)
{
  cycles_fn **cycles;
  const char *(*implementation)(void);
  size_t before, after;
  void *h;
  alarm(BOUND);
#ifdef UNDER_SANITIZER
  /* a dlmopen namespace has no sanitizer runtime of its own */
  fprintf(stderr, "a fresh namespace's copy: not loaded under a sanitizer\n");
  return;
#endif
  if (perf_event_opens()) {
    fprintf(stderr, "a perf event opens here: its thread-locals may take heap; not checked\n");
    return;
  }
  ck_assert(load_call_unload(LIBRARY, 0) != 0);
#ifdef LM_ID_NEWLM
  h = dlmopen(LM_ID_NEWLM, LIBRARY, RTLD_NOW | RTLD_LOCAL);
#else
  h = 0;
#endif
  if (!h) {
    fprintf(stderr, "no dlmopen namespace: not checked\n");
    return;
  }
  *(void **) &cycles = dlsym(h, "cpucycles");
  *(void **) &implementation = dlsym(h, "cpucycles_implementation");
  ck_assert(cycles != 0 && implementation != 0);
  before = heap_in_use();
  (*cycles)();
  (*cycles)();
  implementation();
  after = heap_in_use();
  ck_assert_msg(after == before, "the first call took %ld bytes of heap (%s)",
                (long) (after - before), implementation());
  dlclose(h);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("plugin-host");
  TCase *t = tcase_create("fork-dlclose");
  tcase_set_timeout(t, BOUND + 30);
  tcase_add_test(t, fork_while_another_thread_unloads);
  tcase_add_test(t, fork_during_first_call_of_a_copy_being_unloaded);
  tcase_add_test(t, fresh_copys_first_call_takes_no_heap);
  suite_add_tcase(s, t);
  return run_suite(s);
}
