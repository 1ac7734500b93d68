/* dlclose() of the library while perf events are open (plug-in hosts,
 * language bindings): the library is linked -z nodelete, so dlclose()
 * leaves it mapped (doc/security.md, "Unloading"); a thread's descriptors
 * are closed when it exits, and dlopen / first call / dlclose cycles
 * leave no more descriptors and pthread keys than one load does.
 *
 * Two modules: unload-plugin.so, lib/perf.c linked into a module that
 * opens a stand-in event (a descriptor of /dev/null) through the opener
 * seam, so that the test means something on machines without a PMU; and
 * the library itself, lib/.libs/libcpucycles.so.1, with whatever counter
 * it chooses (a perf counter where the machine has one). */
#include <config.h>
#include <check.h>
#include "check-run.h"
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CYCLES 200

static int count_descriptors(void)
{
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  int n = 0;
  if (!d) return -1;
  while ((e = readdir(d)) != 0)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

/* The lowest free pthread key: glibc hands out the lowest unused one, so a
 * key left behind moves it. */
static pthread_key_t lowest_free_key(void)
{
  pthread_key_t k;
  ck_assert_int_eq(pthread_key_create(&k, 0), 0);
  ck_assert_int_eq(pthread_key_delete(k), 0);
  return k;
}

static void *open_module(const char *path)
{
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(h != 0, "dlopen %s: %s", path, dlerror());
  return h;
}

static void close_module(void *h, const char *path)
{
  void *again;
  ck_assert_int_eq(dlclose(h), 0);
  /* released, and still mapped (-z nodelete): a later dlopen gets the
   * same copy */
  again = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  ck_assert_msg(again == h, "%s unloaded", path);
  dlclose(again);
}

/* ---- the plug-in: a stand-in event ---- */

typedef int open_event_fn(void);

static open_event_fn *plugin_open_event(void *h)
{
  open_event_fn *fn;
  *(void **) &fn = dlsym(h, "unload_plugin_open_event");
  ck_assert(fn != 0);
  return fn;
}

static int opened_in_thread, may_exit;

static void *open_then_wait(void *arg)
{
  open_event_fn *fn = (open_event_fn *) arg;
  __atomic_store_n(&opened_in_thread, fn() == 0 ? 1 : -1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&may_exit, __ATOMIC_ACQUIRE)) sched_yield();
  return 0; /* thread exit: the thread-exit destructors run now */
}

START_TEST(thread_exits_after_dlclose)
{
  void *h = open_module(PLUGIN);
  pthread_t t;
  int before = count_descriptors(), after;
  void *fn = (void *) plugin_open_event(h);
  ck_assert_int_eq(pthread_create(&t, 0, open_then_wait, fn), 0);
  while (!__atomic_load_n(&opened_in_thread, __ATOMIC_ACQUIRE)) sched_yield();
  if (__atomic_load_n(&opened_in_thread, __ATOMIC_ACQUIRE) < 0) return; /* no perf_event support built in */
  ck_assert_int_eq(count_descriptors(), before + 1);
  close_module(h, PLUGIN);
  after = count_descriptors();
  /* The thread exits after the dlclose: its destructor runs (the code
   * stays mapped) and closes its descriptor. */
  __atomic_store_n(&may_exit, 1, __ATOMIC_RELEASE);
  ck_assert_int_eq(pthread_join(t, 0), 0);
  ck_assert_int_eq(after, before + 1);
  ck_assert_int_eq(count_descriptors(), before);
}
END_TEST

START_TEST(plugin_cycles_leave_nothing)
{
  int before = 0, i;
  pthread_key_t key = 0;
  for (i = 0; i < CYCLES; i++) {
    void *h = open_module(PLUGIN);
    if (plugin_open_event(h)() != 0) {
      dlclose(h);
      return; /* no perf_event support built in */
    }
    close_module(h, PLUGIN);
    /* what one load keeps (its key, this thread's event), then no more */
    if (i == 0) {
      before = count_descriptors();
      key = lowest_free_key();
    }
  }
  ck_assert_int_eq(count_descriptors(), before);
  ck_assert_msg(lowest_free_key() == key, "pthread keys left behind");
}
END_TEST

/* ---- the library itself ---- */

static void *call_library(void *arg)
{
  long long (**cycles)(void) = arg;
  (*cycles)();
  return 0;
}

START_TEST(library_cycles_leave_nothing)
{
  int before = 0, i;
  pthread_key_t key = 0;
  for (i = 0; i < CYCLES / 4; i++) {
    void *h = open_module(LIBRARY);
    long long (**cycles)(void);
    const char *(*implementation)(void);
    pthread_t t;
    *(void **) &cycles = dlsym(h, "cpucycles");
    *(void **) &implementation = dlsym(h, "cpucycles_implementation");
    ck_assert(cycles != 0 && implementation != 0);
    (*cycles)();
    ck_assert_ptr_ne(implementation(), 0);
    /* and a thread that reads and exits while the library is loaded */
    ck_assert_int_eq(pthread_create(&t, 0, call_library, cycles), 0);
    ck_assert_int_eq(pthread_join(t, 0), 0);
    close_module(h, LIBRARY);
    if (i == 0) {
      before = count_descriptors();
      key = lowest_free_key();
    }
  }
  ck_assert_int_eq(count_descriptors(), before);
  ck_assert_msg(lowest_free_key() == key, "pthread keys left behind");
}
END_TEST

/* ---- a dlopen() once the static TLS reserve is used up ---- */

/* A copy of the file from, created as to (which must not exist yet): a
 * module under a name of its own, which glibc loads again. */
static void copy_file(const char *from, const char *to)
{
  static char image[1 << 21];
  ssize_t len;
  int fd = open(from, O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  len = read(fd, image, sizeof image);
  close(fd);
  ck_assert(len > 0 && len < (ssize_t) sizeof image);
  fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, image, (size_t) len), len);
  close(fd);
}

/* Copies of tls-hog.so under names of their own (glibc loads a file
 * once), in a temporary directory. */
static char hog_dir[256];

static int copy_hog(int n, char *path, size_t size)
{
  snprintf(path, size, "%s/hog-%d.so", hog_dir, n);
  copy_file(TLS_HOG, path);
  return 0;
}

/* A plug-in host whose other modules used up glibc's static TLS reserve
 * (initial-exec thread-locals, 64 bytes at a time, until glibc refuses
 * one): libcpucycles.so.1 still loads, and counts in two threads. */
START_TEST(library_loads_when_static_tls_is_used_up)
{
  const char *tmp = getenv("TMPDIR");
  char path[512];
  long long (**cycles)(void);
  const char *(*implementation)(void);
  long long a, b;
  pthread_t t;
  void *h;
  int n;

  snprintf(hog_dir, sizeof hog_dir, "%s/tls-hog-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  ck_assert(mkdtemp(hog_dir) != 0);
  for (n = 0; n < 1000; n++) {
    copy_hog(n, path, sizeof path);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    unlink(path); /* loaded or not, the file is not needed again */
    if (!h) {
      const char *why = dlerror();
      /* glibc: "cannot allocate memory in static TLS block" */
      ck_assert_msg(why && strstr(why, "static TLS"), "hog %d: %s", n, why ? why : "?");
      break;
    }
  }
  rmdir(hog_dir);
  if (n == 1000) {
    fprintf(stderr, "static TLS reserve never ran out: not checked\n");
    return;
  }

  h = dlopen(LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(h != 0, "dlopen with the static TLS reserve used up (%d hogs loaded): %s",
                n, dlerror());
  *(void **) &cycles = dlsym(h, "cpucycles");
  *(void **) &implementation = dlsym(h, "cpucycles_implementation");
  ck_assert(cycles != 0 && implementation != 0);
  a = (*cycles)();
  b = (*cycles)();
  ck_assert_int_ge(b, a);
  ck_assert_ptr_ne(implementation(), 0);
  ck_assert_int_eq(pthread_create(&t, 0, call_library, cycles), 0);
  ck_assert_int_eq(pthread_join(t, 0), 0);
  ck_assert_int_ge((*cycles)(), b);
  close_module(h, LIBRARY);
}
END_TEST

/* ---- two copies of the catcher in one process ---- */

typedef int arm_fn(void);
typedef void disarm_fn(void);

static volatile sig_atomic_t program_handler_ran;
static void program_handler(int sig)
{
  (void) sig;
  program_handler_ran = 1;
}

static int second_armed;
static void *second_copy(void *h)
{
  arm_fn *arm;
  disarm_fn *disarm;
  struct timespec pause = { 0, 10000000 };
  *(void **) &arm = dlsym(h, "unload_plugin_catch_arm");
  *(void **) &disarm = dlsym(h, "unload_plugin_catch_disarm");
  int armed = arm() == 0;
  __atomic_store_n(&second_armed, armed ? 1 : -1, __ATOMIC_RELEASE);
  nanosleep(&pause, 0); /* the first copy disarms meanwhile */
  if (armed) disarm();
  return 0;
}

/* The second copy tries to arm while the first is armed, and the first
 * disarms before the second: the second recognises the first's handler
 * and refuses (its counters that may fault would be skipped), so that
 * afterwards, and after both are unloaded, every crash handler is the
 * program's again, and a crash signal reaches it. */
START_TEST(two_copies_leave_the_program_handlers)
{
  static const int signals[] = { SIGILL, SIGFPE, SIGBUS, SIGSEGV, SIGABRT };
  const char *tmp = getenv("TMPDIR");
  char dir[256], path[2][300];
  struct sigaction a;
  arm_fn *arm;
  disarm_fn *disarm;
  pthread_t t;
  void *h[2];
  size_t i;

  memset(&a, 0, sizeof a);
  a.sa_handler = program_handler;
  sigemptyset(&a.sa_mask);
  for (i = 0; i < sizeof signals / sizeof signals[0]; i++)
    ck_assert_int_eq(sigaction(signals[i], &a, 0), 0);

  snprintf(dir, sizeof dir, "%s/two-copies-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  ck_assert(mkdtemp(dir) != 0);
  /* two copies of PLUGIN: a second copy of the library's code (a static
   * copy inside a plugin beside the shared one) */
  for (i = 0; i < 2; i++) {
    snprintf(path[i], sizeof path[i], "%s/copy-%d.so", dir, (int) i);
    copy_file(PLUGIN, path[i]);
    h[i] = open_module(path[i]);
  }
  *(void **) &arm = dlsym(h[0], "unload_plugin_catch_arm");
  *(void **) &disarm = dlsym(h[0], "unload_plugin_catch_disarm");
  ck_assert(arm != 0 && disarm != 0);

  ck_assert_int_eq(arm(), 0);
  ck_assert_int_eq(pthread_create(&t, 0, second_copy, h[1]), 0);
  while (!__atomic_load_n(&second_armed, __ATOMIC_ACQUIRE)) sched_yield();
  ck_assert_msg(second_armed == -1, "the second copy armed over the first's handler");
  disarm();
  ck_assert_int_eq(pthread_join(t, 0), 0);

  for (i = 0; i < 2; i++) {
    close_module(h[i], path[i]);
    unlink(path[i]);
  }
  rmdir(dir);
  for (i = 0; i < sizeof signals / sizeof signals[0]; i++) {
    ck_assert_int_eq(sigaction(signals[i], 0, &a), 0);
    ck_assert_msg(a.sa_handler == program_handler,
                  "signal %d: a copy's handler left installed", signals[i]);
  }
  raise(SIGSEGV);
  ck_assert_int_eq(program_handler_ran, 1);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("unload");
  TCase *t = tcase_create("dlclose");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, thread_exits_after_dlclose);
  tcase_add_test(t, plugin_cycles_leave_nothing);
  tcase_add_test(t, library_cycles_leave_nothing);
  tcase_add_test(t, library_loads_when_static_tls_is_used_up);
  tcase_add_test(t, two_copies_leave_the_program_handlers);
  suite_add_tcase(s, t);
  return run_suite(s);
}
