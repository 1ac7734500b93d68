/* check.h for the Windows test run (tests/check-windows.sh): the part of
 * Check's API that the project's portable tests use, for mingw-w64, which
 * has no Check.  Not a general replacement for Check.
 *
 * As Check does by default, every test runs in a process of its own (so
 * each sees the library's first call afresh): srunner_run_all starts this
 * same program again for each test with CK_SHIM_RUN=N in its environment
 * (Windows has no fork), and the child runs test N only, with its case's
 * checked fixtures, and exits 0 when it passed.  A failed assertion prints
 * its place and message and exits 1 (a failure); a crash ends the child
 * with the exception's code, and a child that cannot be started or runs
 * out of time is reported too (errors).  CK_RUN_CASE=NAME runs only the
 * test case NAME, as in Check.  The summary line is Check's: "NN%: Checks:
 * N, Failures: N, Errors: N". */
#ifndef CHECK_SHIM_WINDOWS_H
#define CHECK_SHIM_WINDOWS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#define CK_NORMAL 0
#define CK_SHIM_MAX_TESTS 1024
#define CK_SHIM_MAX_CASES 64

struct ck_test {
  const char *name;
  void (*fn)(int);
};

typedef struct TCase {
  const char *name;
  void (*setup)(void);
  void (*teardown)(void);
  double timeout;
} TCase;

typedef struct Suite {
  const char *name;
} Suite;

typedef struct SRunner {
  Suite *suite;
  int failed;
} SRunner;

struct ck_shim_entry {
  TCase *tcase;
  const struct ck_test *test;
  int i;
};

static struct ck_shim_entry ck_shim_entries[CK_SHIM_MAX_TESTS];
static int ck_shim_count;
static TCase ck_shim_cases[CK_SHIM_MAX_CASES];
static int ck_shim_ncases;
static const char *ck_shim_current;

#define START_TEST(name) \
  static void name##_fn(int _i __attribute__((unused))); \
  static const struct ck_test name##_def = { #name, name##_fn }; \
  static const struct ck_test *const name = &name##_def; \
  static void name##_fn(int _i __attribute__((unused)))
#define END_TEST

static inline Suite *suite_create(const char *name)
{
  static Suite s;
  s.name = name;
  return &s;
}

static inline TCase *tcase_create(const char *name)
{
  TCase *t;
  if (ck_shim_ncases == CK_SHIM_MAX_CASES) abort();
  t = &ck_shim_cases[ck_shim_ncases++];
  t->name = name;
  t->timeout = 4;
  return t;
}

static inline void suite_add_tcase(Suite *s, TCase *t) { (void) s; (void) t; }

static inline void tcase_set_timeout(TCase *t, double seconds)
{
  t->timeout = seconds;
}

static inline void tcase_add_checked_fixture(TCase *t, void (*setup)(void),
                                             void (*teardown)(void))
{
  t->setup = setup;
  t->teardown = teardown;
}

static inline void tcase_add_loop_test(TCase *t, const struct ck_test *test,
                                       int start, int end)
{
  int i;
  for (i = start; i < end; i++) {
    if (ck_shim_count == CK_SHIM_MAX_TESTS) abort();
    ck_shim_entries[ck_shim_count].tcase = t;
    ck_shim_entries[ck_shim_count].test = test;
    ck_shim_entries[ck_shim_count].i = i;
    ck_shim_count++;
  }
}

static inline void tcase_add_test(TCase *t, const struct ck_test *test)
{
  tcase_add_loop_test(t, test, 0, 1);
}

static inline SRunner *srunner_create(Suite *s)
{
  static SRunner r;
  r.suite = s;
  r.failed = 0;
  return &r;
}

static inline void srunner_free(SRunner *r) { (void) r; }
static inline int srunner_ntests_failed(SRunner *r) { return r->failed; }

/* A crash nobody handled ends the child at once with the exception's
 * code (not in a debugger or an error box), which the parent reports. */
static LONG WINAPI ck_shim_crashed(PEXCEPTION_POINTERS e)
{
  fflush(stdout);
  TerminateProcess(GetCurrentProcess(), e->ExceptionRecord->ExceptionCode);
  return EXCEPTION_EXECUTE_HANDLER;
}

/* In the child: test n, then exit. */
static inline void ck_shim_child(int n)
{
  struct ck_shim_entry *e = &ck_shim_entries[n];
  SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
  SetUnhandledExceptionFilter(ck_shim_crashed);
  ck_shim_current = e->test->name;
  if (e->tcase->setup) e->tcase->setup();
  e->test->fn(e->i);
  if (e->tcase->teardown) e->tcase->teardown();
  fflush(stdout);
  fflush(stderr);
  exit(0);
}

/* How a test's process ended, as ck_shim_spawn tells. */
enum ck_shim_end { CK_SHIM_EXITED, CK_SHIM_TIMED_OUT, CK_SHIM_NOT_RUN };

/* Wine's CreateProcess fails now and then with ERROR_INTERNAL_ERROR (1359)
 * when the new process cannot lay out its address space ("failed to map
 * the shared user data", c0000018): about one start in 5,000 here.  The
 * test has not run then, so starting it again hides nothing; after a few
 * tries the parent reports an error with the code. */
#define CK_SHIM_START_TRIES 5

/* In the parent: this program again, for test n.  *code is the child's
 * exit code when it exited, GetLastError's when it could not be run. */
static inline enum ck_shim_end ck_shim_spawn(int n, double timeout,
                                             DWORD *code)
{
  char self[MAX_PATH + 3], value[16];
  STARTUPINFOA si;
  PROCESS_INFORMATION pi;
  enum ck_shim_end end = CK_SHIM_EXITED;
  BOOL started = FALSE;
  int tries;
  const char *multiplier = getenv("CK_TIMEOUT_MULTIPLIER");
  double ms = timeout * 1000 * (multiplier ? atof(multiplier) : 1);

  self[0] = '"';
  if (!GetModuleFileNameA(0, self + 1, MAX_PATH)) {
    *code = GetLastError();
    return CK_SHIM_NOT_RUN;
  }
  strcat(self, "\"");
  snprintf(value, sizeof value, "%d", n);
  SetEnvironmentVariableA("CK_SHIM_RUN", value);
  memset(&si, 0, sizeof si);
  si.cb = sizeof si;
  fflush(stdout);
  fflush(stderr);
  for (tries = 0; !started && tries < CK_SHIM_START_TRIES; tries++) {
    if (tries) Sleep(100);
    started = CreateProcessA(0, self, 0, 0, TRUE, 0, 0, 0, &si, &pi);
    if (!started) *code = GetLastError();
  }
  SetEnvironmentVariableA("CK_SHIM_RUN", 0);
  if (!started) return CK_SHIM_NOT_RUN;
  if (WaitForSingleObject(pi.hProcess, ms < 1 ? 1 : (DWORD) ms)
      != WAIT_OBJECT_0) {
    TerminateProcess(pi.hProcess, 1);
    WaitForSingleObject(pi.hProcess, INFINITE);
    end = CK_SHIM_TIMED_OUT;
  } else if (!GetExitCodeProcess(pi.hProcess, code)) {
    *code = GetLastError();
    end = CK_SHIM_NOT_RUN;
  }
  CloseHandle(pi.hThread);
  CloseHandle(pi.hProcess);
  return end;
}

static inline void srunner_run_all(SRunner *r, int mode)
{
  const char *run = getenv("CK_SHIM_RUN");
  const char *only = getenv("CK_RUN_CASE");
  int n, ran = 0, failures = 0, errors = 0;
  (void) mode;

  if (run) {
    n = atoi(run);
    if (n >= 0 && n < ck_shim_count) ck_shim_child(n);
    exit(2);
  }
  printf("Running suite(s): %s\n", r->suite->name);
  for (n = 0; n < ck_shim_count; n++) {
    struct ck_shim_entry *e = &ck_shim_entries[n];
    DWORD code = 0;
    enum ck_shim_end end;
    if (only && strcmp(only, e->tcase->name) != 0) continue;
    ran++;
    end = ck_shim_spawn(n, e->tcase->timeout, &code);
    if (end == CK_SHIM_EXITED && code == 0) continue;
    if (end == CK_SHIM_EXITED && code == 1) {
      failures++; /* the child printed the assertion */
      continue;
    }
    errors++;
    printf("%s:%s:%d: E: ", e->tcase->name, e->test->name, e->i);
    if (end == CK_SHIM_TIMED_OUT)
      printf("test timeout expired\n");
    else if (end == CK_SHIM_NOT_RUN)
      printf("could not run the test (error %lu)\n", (unsigned long) code);
    else
      printf("ended with code 0x%lx\n", (unsigned long) code);
  }
  printf("%d%%: Checks: %d, Failures: %d, Errors: %d\n",
         ran ? 100 * (ran - failures - errors) / ran : 0, ran, failures,
         errors);
  fflush(stdout);
  r->failed = failures + errors;
}

static inline void ck_shim_fail(const char *file, int line, const char *fmt,
                                ...) __attribute__((format(printf, 3, 4)));
static inline void ck_shim_fail(const char *file, int line, const char *fmt,
                                ...)
{
  va_list ap;
  printf("%s:%d:F:%s: ", file, line, ck_shim_current ? ck_shim_current : "?");
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
  exit(1);
}

#define ck_assert_msg(expr, ...) \
  do { if (!(expr)) ck_shim_fail(__FILE__, __LINE__, __VA_ARGS__); } while (0)
#define ck_assert(expr) ck_assert_msg(expr, "Assertion '%s' failed", #expr)

#define ck_shim_int(a, op, b) do { \
    long long ck_a = (long long) (a), ck_b = (long long) (b); \
    ck_assert_msg(ck_a op ck_b, "Assertion '%s' failed: %s == %lld, %s == %lld", \
                  #a " " #op " " #b, #a, ck_a, #b, ck_b); \
  } while (0)
#define ck_assert_int_eq(a, b) ck_shim_int(a, ==, b)
#define ck_assert_int_ne(a, b) ck_shim_int(a, !=, b)
#define ck_assert_int_lt(a, b) ck_shim_int(a, <, b)
#define ck_assert_int_le(a, b) ck_shim_int(a, <=, b)
#define ck_assert_int_gt(a, b) ck_shim_int(a, >, b)
#define ck_assert_int_ge(a, b) ck_shim_int(a, >=, b)
#define ck_assert_uint_eq(a, b) do { \
    unsigned long long ck_a = (a), ck_b = (b); \
    ck_assert_msg(ck_a == ck_b, "Assertion '%s' failed: %llu != %llu", \
                  #a " == " #b, ck_a, ck_b); \
  } while (0)
#define ck_assert_ptr_eq(a, b) do { \
    const void *ck_a = (a), *ck_b = (b); \
    ck_assert_msg(ck_a == ck_b, "Assertion '%s' failed", #a " == " #b); \
  } while (0)
#define ck_assert_ptr_nonnull(a) \
  ck_assert_msg((a) != 0, "Assertion '%s' failed", #a " != NULL")
#define ck_assert_ptr_null(a) \
  ck_assert_msg((a) == 0, "Assertion '%s' failed", #a " == NULL")
#define ck_assert_str_eq(a, b) do { \
    const char *ck_a = (a), *ck_b = (b); \
    ck_assert_msg(strcmp(ck_a, ck_b) == 0, \
                  "Assertion '%s' failed: \"%s\" != \"%s\"", \
                  #a " == " #b, ck_a, ck_b); \
  } while (0)
#define ck_assert_str_ne(a, b) do { \
    const char *ck_a = (a), *ck_b = (b); \
    ck_assert_msg(strcmp(ck_a, ck_b) != 0, \
                  "Assertion '%s' failed: \"%s\" == \"%s\"", \
                  #a " != " #b, ck_a, ck_b); \
  } while (0)

#endif
