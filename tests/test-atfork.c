/* The program's fork handlers around the library's, in any order, with
 * cpucycles() called from them (doc/security.md, "fork").
 *
 * A program that registers pthread_atfork handlers which timestamp with
 * cpucycles(), then loads the library with dlopen (a plug-in), has its
 * handlers registered before the library's: glibc runs prepare handlers
 * in reverse order of registration and parent and child handlers in
 * order, so the library's prepare handler runs first and its parent and
 * child handlers last, and the program's handlers all run while the
 * library holds what its prepare handler took.  A first call (or any
 * call) made there must work: in the prepare handler, in the parent's,
 * in the child's, and with handlers registered on both sides.
 *
 * The library is dlopened from the build directory (LIBRARY); the test
 * program does not link it.  Each test makes the process's first fork. */
#include <config.h>
#include <check.h>
#include "check-run.h"
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The library's entry points, through dlsym. */
static long long (**cycles)(void);
static const char *(*implementation)(void);

/* What the program's handlers saw. */
static long long stamp_prepare = -1, stamp_parent = -1, stamp_child = -1;

static long long stamp(void)
{
  long long t = (*cycles)();
  /* a first call that picks nothing counts nothing */
  if (strcmp(implementation(), "default-zero") == 0) return -2;
  return t;
}

static void prepare(void) { stamp_prepare = stamp(); }
static void parent(void) { stamp_parent = stamp(); }
static void child(void) { stamp_child = stamp(); }

static void load_library(void)
{
  void *h = dlopen(LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(h != 0, "dlopen %s: %s", LIBRARY, dlerror());
  *(void **) &cycles = dlsym(h, "cpucycles");
  *(void **) &implementation = dlsym(h, "cpucycles_implementation");
  ck_assert(cycles != 0 && implementation != 0);
}

enum {
  CHILD_OK,
  CHILD_NO_STAMP,
  CHILD_NOT_COUNTING,
  CHILD_FORK_FAILED
};

/* In the child: the child handler's stamp where there is one, then a
 * counter that counts, and a fork of its own (the library's handlers are
 * in a usable state). */
static int child_checks(int want_child_stamp)
{
  long long a, b;
  pid_t pid;
  int status;

  alarm(30); /* a child stuck in the library is killed */
  if (want_child_stamp && stamp_child < 0) return CHILD_NO_STAMP;
  a = stamp();
  b = stamp();
  if (a < 0 || b < a) return CHILD_NOT_COUNTING;
  pid = fork();
  if (pid < 0) return CHILD_FORK_FAILED;
  if (pid == 0) _exit(0);
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return CHILD_FORK_FAILED;
  return CHILD_OK;
}

/* Registers the program's handlers (those asked for), loads the library,
 * forks: the library's first call happens inside a handler. */
static void fork_with_handlers(int with_prepare, int with_parent, int with_child)
{
  pid_t pid;
  int status;

  ck_assert_int_eq(pthread_atfork(with_prepare ? prepare : 0,
                                  with_parent ? parent : 0,
                                  with_child ? child : 0), 0);
  load_library();
  alarm(60); /* a handler waiting for the library is stopped */
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) _exit(child_checks(with_child));
  while (waitpid(pid, &status, 0) < 0) ck_assert_int_eq(errno, EINTR);
  alarm(0);
  ck_assert_msg(WIFEXITED(status), "child killed by signal %d", WTERMSIG(status));
  ck_assert_msg(WEXITSTATUS(status) == CHILD_OK, "child: %d", WEXITSTATUS(status));
  if (with_prepare) ck_assert_msg(stamp_prepare >= 0, "prepare handler: %lld", stamp_prepare);
  if (with_parent) ck_assert_msg(stamp_parent >= 0, "parent handler: %lld", stamp_parent);
  if (with_prepare && with_parent) ck_assert(stamp_parent >= stamp_prepare);
  /* and the parent goes on counting, and forking */
  ck_assert(stamp() >= 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) _exit(child_checks(with_child));
  while (waitpid(pid, &status, 0) < 0) ck_assert_int_eq(errno, EINTR);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == CHILD_OK);
}

START_TEST(first_call_in_prepare_handler) { fork_with_handlers(1, 0, 0); }
END_TEST
START_TEST(first_call_in_parent_handler) { fork_with_handlers(0, 1, 0); }
END_TEST
START_TEST(first_call_in_child_handler) { fork_with_handlers(0, 0, 1); }
END_TEST
START_TEST(calls_in_every_handler) { fork_with_handlers(1, 1, 1); }
END_TEST

/* Handlers registered after the library's too: they run outside its
 * prepare-to-parent/child window, as for a library linked at build time. */
START_TEST(handlers_on_both_sides)
{
  pid_t pid;
  int status;

  ck_assert_int_eq(pthread_atfork(prepare, parent, child), 0);
  load_library();
  ck_assert_int_eq(pthread_atfork(prepare, parent, child), 0);
  alarm(60);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) _exit(child_checks(1));
  while (waitpid(pid, &status, 0) < 0) ck_assert_int_eq(errno, EINTR);
  alarm(0);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == CHILD_OK);
  ck_assert(stamp_prepare >= 0 && stamp_parent >= stamp_prepare);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("atfork");
  TCase *t = tcase_create("plugin");

  unsetenv("CPUCYCLES_COUNTER");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, first_call_in_prepare_handler);
  tcase_add_test(t, first_call_in_parent_handler);
  tcase_add_test(t, first_call_in_child_handler);
  tcase_add_test(t, calls_in_every_handler);
  tcase_add_test(t, handlers_on_both_sides);
  suite_add_tcase(s, t);
  return run_suite(s);
}
