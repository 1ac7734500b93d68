/* The first call in a sandbox: under seccomp filters that answer an error
 * to system calls the library makes (doc/security.md, "Sandboxes").  Each
 * test makes the first call in a fresh child under its filter
 * (tests/sandbox.c) and looks at what it chose; a child still running
 * after SANDBOX_DEADLINE seconds is a hang.
 *
 * Linked with the static library, so that the library's internals (the
 * PMU discovery) are reachable too, in the one copy the program has.
 * Skipped (exit 77) where no filter can be installed. */
#include <config.h>
#include <check.h>
#include "check-run.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "cpucycles.h"
#include "checked-by.h"
#include "adapters.h"
#include "counter.h"
#include "select.h"
#include "fixture-tree.h"
#include "open-counters.h"
#include "persecond.h"
#include "pmu.h"
#include "sandbox.h"

/* What a first call chose, as the child reports it. */
struct outcome {
  enum sandbox_result result;
  char report[512];
  char implementation[64];
  long long persecond;
  int monotone;  /* 1000 later reads never went backwards */
  int increased; /* and the last was above the first */
  char works[256]; /* the counters the probe measured working, in the
                      table's order, each followed by a comma */
};

/* The counters the child's probe found working ("name,"), and those it
 * did not try because their faults could not be caught ("name?,").  Two
 * first calls on one machine find the same ones, while the choice between
 * two of equal precision (amd64-tsc and amd64-tscasm, the same
 * instruction) follows each run's measurements: a filter that costs the
 * probe a counter shows here, a tie broken the other way does not. */
static char works[256];

static void note_works(const struct probe_report *r, void *unused)
{
  size_t len = strlen(works), n = strlen(r->name);
  const char *mark = r->outcome == PROBE_WORKS ? ","
                     : r->outcome == PROBE_NOT_TRIED ? "?," : 0;
  (void)unused;
  if (!mark || len + n + strlen(mark) >= sizeof works) return;
  memcpy(works + len, r->name, n);
  strcpy(works + len + n, mark);
}

static const struct probe_observer watch_probe = { "", 0, note_works, 0 };

static void first_call(char *report, size_t size)
{
  long long first, last, now;
  int i, monotone = 1;

  works[0] = 0;
  /* an observed probe measures every counter, as a traced one does: only
   * where the whole table is probed anyway, no counter named */
  if (!getenv("CPUCYCLES_COUNTER")) cpucycles_probe_observe(&watch_probe);
  first = cpucycles();
  last = first;
  for (i = 0; i < 1000; i++) {
    now = cpucycles();
    if (now < last) monotone = 0;
    last = now;
  }
  snprintf(report, size, "%s %lld %d %d %s", cpucycles_implementation(),
           cpucycles_persecond(), monotone, last > first,
           works[0] ? works : "-");
}

/* A sandboxed child process runs child (first_call, or one that appends
 * to its report) under the refusals, after prepare; its report parsed. */
static void run_under(const struct refusal *refused, int n,
                      void (*prepare)(void),
                      void (*child)(char *report, size_t size),
                      struct outcome *out)
{
  memset(out, 0, sizeof *out);
  out->result = sandbox_run(refused, n, prepare, child, out->report,
                            sizeof out->report);
  if (out->result == SANDBOX_DONE)
    ck_assert_msg(sscanf(out->report, "%63s %lld %d %d %255s", out->implementation,
                         &out->persecond, &out->monotone, &out->increased,
                         out->works) == 5,
                  "unexpected report: %s", out->report);
}

static void first_call_under(const struct refusal *refused, int n,
                             void (*prepare)(void), struct outcome *out)
{
  run_under(refused, n, prepare, first_call, out);
}

/* The first call ended, with a working counter. */
static void assert_counts(const struct outcome *out, const char *what)
{
  ck_assert_msg(out->result != SANDBOX_HUNG, "%s: the first call hangs: %s",
                what, out->report);
  ck_assert_msg(out->result == SANDBOX_DONE, "%s: %s", what, out->report);
  ck_assert_msg(strcmp(out->implementation, "default-zero") != 0,
                "%s: default-zero chosen (%s)", what, out->report);
  ck_assert_msg(out->monotone && out->increased, "%s: %s does not count (%s)",
                what, out->implementation, out->report);
}

/* Whether the list (works' form) has "name" followed by mark. */
static int listed(const char *list, const char *name, size_t len, char mark)
{
  const char *p = list;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (mark ? n == len + 1 && p[len] == mark && strncmp(p, name, len) == 0
             : n == len && strncmp(p, name, len) == 0)
      return 1;
    p += end ? n + 1 : n;
  }
  return 0;
}

/* The probe under a filter found the same counters working as without
 * one, and so chose among the same: the choice itself may differ only
 * where two tie (see works).  With may_skip, a counter working without
 * the filter may instead be left untried (its faults could not be caught
 * under it, as doc/security.md says), but no other may go missing. */
static void assert_same_counters(const struct outcome *out,
                                 const struct outcome *free_choice,
                                 const char *what, int may_skip)
{
  const char *p;

  for (p = free_choice->works; *p && *p != '-'; p = strchr(p, ',') + 1) {
    size_t n = strcspn(p, ",?");
    ck_assert_msg(listed(out->works, p, n, 0)
                    || (may_skip && listed(out->works, p, n, '?')),
                  "%s: %.*s works without a filter, not under it (%s; "
                  "without: %s)", what, (int)n, p, out->works,
                  free_choice->works);
  }
  for (p = out->works; *p && *p != '-'; p = strchr(p, ',') + 1) {
    size_t n = strcspn(p, ",?");
    if (p[n] == '?') continue;
    ck_assert_msg(listed(free_choice->works, p, n, 0),
                  "%s: %.*s works under the filter, not without it (%s; "
                  "without: %s)", what, (int)n, p, out->works,
                  free_choice->works);
  }
  ck_assert_msg(listed(out->works, out->implementation,
                       strlen(out->implementation), 0),
                "%s: %s chosen, not among the counters working: %s", what,
                out->implementation, out->works);
}

/* ---- system calls that never succeed ---- */

START_TEST(eintr_on_every_open)
{
  static const struct refusal refused[] = {
    { "open", EINTR }, { "openat", EINTR }, { "openat2", EINTR },
  };
  struct outcome out;

#ifdef UNDER_SANITIZER
  /* the runtime opens files of its own (/proc/self/maps) and aborts when
   * it cannot: left to the plain run */
  fprintf(stderr, "EINTR for every open: not run under a sanitizer\n");
  return;
#endif
  unsetenv("cpucyclespersecond");
  first_call_under(refused, 3, 0, &out);
  assert_counts(&out, "EINTR for every open");
  /* every file unreadable: the frequency is the default */
  ck_assert_int_eq(out.persecond, CPUCYCLES_PERSECOND_DEFAULT);
}
END_TEST

START_TEST(eintr_on_every_read)
{
  static const struct refusal refused[] = { { "read", EINTR } };
  struct outcome out;

  unsetenv("cpucyclespersecond");
  first_call_under(refused, 1, 0, &out);
  assert_counts(&out, "EINTR for every read");
  ck_assert_int_eq(out.persecond, CPUCYCLES_PERSECOND_DEFAULT);
}
END_TEST

/* ---- refused questions: prctl(PR_GET_TSC), rt_sigpending ---- */

/* The choice without a filter, for comparison. */
static void first_call_free(struct outcome *out)
{
  first_call_under(0, 0, 0, out);
  assert_counts(out, "without a filter");
}

START_TEST(rt_sigpending_refused)
{
  static const struct refusal refused[] = { { "rt_sigpending", EPERM } };
  struct outcome free_choice, out;

  first_call_free(&free_choice);
  first_call_under(refused, 1, 0, &out);
  assert_counts(&out, "rt_sigpending refused");
  assert_same_counters(&out, &free_choice, "rt_sigpending refused", 0);
}
END_TEST

#if defined(__x86_64__) || defined(__i386__)
static void disable_rdtsc(void)
{
  if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0) _exit(3);
}

/* The library cannot ask whether RDTSC faults: the same choice as when it
 * can, where it does not. */
static void prctl_refused_rdtsc_allowed(int err)
{
  const struct refusal refused[] = { { "prctl", err } };
  struct outcome free_choice, out;

  first_call_free(&free_choice);
  first_call_under(refused, 1, 0, &out);
  assert_counts(&out, "prctl refused");
  assert_same_counters(&out, &free_choice, "prctl refused", 0);
}

static void run_rdtsc(char *report, size_t size)
{
  unsigned int lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  snprintf(report, size, "rdtsc ran: %u", lo ^ hi);
}

/* Whether PR_SET_TSC really makes RDTSC fault here: some hypervisors let
 * the guest kernel record the setting without enforcing it. */
static int rdtsc_faults_when_disabled(void)
{
  char report[128];
  return sandbox_run(0, 0, disable_rdtsc, run_rdtsc, report, sizeof report)
         == SANDBOX_FAILED && strstr(report, "(died of signal");
}

/* Where it does fault (a sandbox disabled RDTSC, then refused prctl): no
 * TSC, and the OS clocks read through the system call, which cannot
 * fault, rather than the vDSO, which does. */
static void prctl_refused_rdtsc_disabled(int err)
{
  const struct refusal refused[] = { { "prctl", err } };
  struct outcome out;

#ifdef UNDER_SANITIZER
  /* the runtime's own clock reads would fault: left to the plain run */
  fprintf(stderr, "RDTSC disabled: not run under a sanitizer\n");
  return;
#endif
  if (!rdtsc_faults_when_disabled()) {
    fprintf(stderr, "RDTSC disabled: not run, RDTSC still runs after "
                    "prctl(PR_SET_TSC, PR_TSC_SIGSEGV) here (a hypervisor "
                    "that does not enforce it)\n");
    return;
  }
  first_call_under(refused, 1, disable_rdtsc, &out);
  assert_counts(&out, "RDTSC disabled, prctl refused");
  ck_assert_msg(strncmp(out.implementation, "default-", 8) == 0,
                "RDTSC faults, yet %s was chosen", out.implementation);
}

/* A sandbox that kills on prctl and names a counter that needs no TSC
 * question: nothing asks it. */
static void name_monotonic(void)
{
  if (setenv("CPUCYCLES_COUNTER", "default-monotonic", 1) != 0) _exit(3);
}

static void name_gettimeofday(void)
{
  if (setenv("CPUCYCLES_COUNTER", "default-gettimeofday", 1) != 0) _exit(3);
}

START_TEST(prctl_kills_named_os_clock)
{
  static const struct refusal refused[] = { { "prctl", SANDBOX_KILL } };
  struct outcome out;

  first_call_under(refused, 1, name_monotonic, &out);
  assert_counts(&out, "prctl kills, default-monotonic named");
  ck_assert_str_eq(out.implementation, "default-monotonic");
  first_call_under(refused, 1, name_gettimeofday, &out);
  assert_counts(&out, "prctl kills, default-gettimeofday named");
  ck_assert_str_eq(out.implementation, "default-gettimeofday");
}
END_TEST

/* A sandbox that kills the clocks' system calls and names a counter that
 * reads no clock: the first call makes none (the perf counters' fallback
 * clock takes its base second at its own first read, not in every first
 * call). */
static void name_zero(void)
{
  if (setenv("CPUCYCLES_COUNTER", "default-zero", 1) != 0) _exit(3);
}

#if defined(__x86_64__)
static void name_tsc(void)
{
  if (setenv("CPUCYCLES_COUNTER", "amd64-tsc", 1) != 0) _exit(3);
}
#endif

START_TEST(clocks_killed_named_counter_reads_none)
{
  static const struct refusal refused[] = {
    { "clock_gettime", SANDBOX_KILL }, { "gettimeofday", SANDBOX_KILL },
  };
  struct outcome out;

  first_call_under(refused, 2, name_zero, &out);
  ck_assert_msg(out.result == SANDBOX_DONE, "default-zero named: %s", out.report);
  ck_assert_str_eq(out.implementation, "default-zero");
#if defined(__x86_64__)
  first_call_under(refused, 2, name_tsc, &out);
  assert_counts(&out, "clocks killed, amd64-tsc named");
  ck_assert_str_eq(out.implementation, "amd64-tsc");
#endif
}
END_TEST

START_TEST(prctl_eperm_rdtsc_allowed) { prctl_refused_rdtsc_allowed(EPERM); }
END_TEST
START_TEST(prctl_enosys_rdtsc_allowed) { prctl_refused_rdtsc_allowed(ENOSYS); }
END_TEST
START_TEST(prctl_eperm_rdtsc_disabled) { prctl_refused_rdtsc_disabled(EPERM); }
END_TEST
START_TEST(prctl_enosys_rdtsc_disabled) { prctl_refused_rdtsc_disabled(ENOSYS); }
END_TEST
START_TEST(prctl_einval_rdtsc_disabled) { prctl_refused_rdtsc_disabled(EINVAL); }
END_TEST
#endif

/* A 32-bit counter's extension measures the counter's rate against the
 * OS clock for about 2 ms when it is installed.  With the clock's system
 * calls refused (and prctl too, which sends the clocks to the system
 * calls), the clock never moves: the measurement must end anyway. */
static long long ticking32(void)
{
  static unsigned int ticks;
  ticks += 1000;
  return (long long) ticks;
}

static const struct counter fake32 = { "fake-32", ticking32, 0, 0, 0, COUNTER_TRIES };

static void install_extend32(char *report, size_t size)
{
  struct choice c;
  long long (*read)(void);
  long long a, b;

  memset(&c, 0, sizeof c);
  c.counter = &fake32;
  c.info.kind = COUNTER_OFFCORE;
  c.info.frequency = 1000000000;
  c.info.only32 = 1;
  c.scaling = 1.0;
  read = cpucycles_adapter_for(&c, 1000000000);
  a = read();
  b = read();
  snprintf(report, size, "%d", b > a);
}

START_TEST(stopped_clock_extend32)
{
  static const struct refusal refused[] = {
    { "prctl", EPERM }, { "clock_gettime", EPERM }, { "clock_gettime64", EPERM },
    { "gettimeofday", EPERM },
  };
  char report[256];
  enum sandbox_result r = sandbox_run(refused, 4, 0, install_extend32, report, sizeof report);
  ck_assert_msg(r != SANDBOX_HUNG, "installing extend32 hangs: %s", report);
  ck_assert_msg(r == SANDBOX_DONE && strcmp(report, "1") == 0, "%s", report);
}
END_TEST

/* The PMU discovery, which a perf counter's first successful open
 * starts, over a fixture tree with one core PMU. */
static char pmu_tree[256];

static void discover(char *report, size_t size)
{
  struct cpucycles_pmu pmus[CPUCYCLES_PMU_MAX];
  int found = cpucycles_pmu_discover(pmu_tree, pmus, CPUCYCLES_PMU_MAX);
  snprintf(report, size, "%d", found);
}

START_TEST(eintr_on_every_directory_read)
{
  static const struct refusal refused[] = { { "getdents64", EINTR } };
  char report[256];
  enum sandbox_result r;
  const char *tmp = getenv("TMPDIR");

  snprintf(pmu_tree, sizeof pmu_tree, "%s/cpucycles-sandbox.XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(pmu_tree));
  fixture_put(pmu_tree, "/sys/bus/event_source/devices/cpu/type", "4\n");
  fixture_put(pmu_tree, "/sys/bus/event_source/devices/cpu/cpus", "0-3\n");
  r = sandbox_run(0, 0, 0, discover, report, sizeof report);
  ck_assert_msg(r == SANDBOX_DONE && strcmp(report, "1") == 0,
                "the tree has one core PMU: %s", report);
  r = sandbox_run(refused, 1, 0, discover, report, sizeof report);
  fixture_remove(pmu_tree);
  ck_assert_msg(r != SANDBOX_HUNG, "the discovery hangs: %s", report);
  ck_assert_msg(r == SANDBOX_DONE && strcmp(report, "0") == 0,
                "an unreadable directory has no PMU: %s", report);
}
END_TEST

/* cpucycles-open, a dry run over a fixture tree, reading its settings. */
static void open_dry_run(char *report, size_t size)
{
  static char out_text[2048], err_text[2048];
  struct open_config config;
  FILE *out = fmemopen(out_text, sizeof out_text, "w");
  FILE *err = fmemopen(err_text, sizeof err_text, "w");
  int status;

  memset(&config, 0, sizeof config);
  config.root = pmu_tree;
  config.dry_run = 1;
  config.arch = OPEN_ARCH_X86;
  status = open_counters_run(&config, out, err);
  fclose(out);
  fclose(err);
  snprintf(report, size, "%d\n%s%s", status, out_text, err_text);
}

START_TEST(cpucycles_open_survives_eintr_on_every_read)
{
  static const struct refusal refused[] = { { "read", EINTR } };
  char report[4096];
  enum sandbox_result r;
  const char *tmp = getenv("TMPDIR");

  snprintf(pmu_tree, sizeof pmu_tree, "%s/cpucycles-sandbox.XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(pmu_tree));
  fixture_put(pmu_tree, "/proc/sys/kernel/perf_event_paranoid", "3\n");
  r = sandbox_run(0, 0, 0, open_dry_run, report, sizeof report);
  ck_assert_msg(r == SANDBOX_DONE && strstr(report, "would change kernel.perf_event_paranoid from 3 to 2"),
                "%s", report);
  r = sandbox_run(refused, 1, 0, open_dry_run, report, sizeof report);
  fixture_remove(pmu_tree);
  ck_assert_msg(r != SANDBOX_HUNG, "cpucycles-open hangs: %s", report);
  ck_assert_msg(r == SANDBOX_DONE && report[0] == '1' &&
                  strstr(report, "cannot read") && strstr(report, strerror(EINTR)),
                "the setting is reported unreadable: %s", report);
}
END_TEST

/* ---- signal handling refused or unavailable (issue: the probe asks) ---- */

/* The crash signals' system calls refused: the counters the kernel answers
 * for need none of them, so the same counters work as without a filter;
 * only those that may fault (a perf page offering RDPMC) may go untried
 * (on x86-64 Linux without such a page, no signal call is made at all). */
static void signal_calls_refused(const char *call)
{
  const struct refusal refused[] = { { call, EPERM } };
  struct outcome free_choice, out;

  first_call_free(&free_choice);
  first_call_under(refused, 1, 0, &out);
  assert_counts(&out, call);
  assert_same_counters(&out, &free_choice, call, 1);
}

START_TEST(rt_sigaction_refused) { signal_calls_refused("rt_sigaction"); }
END_TEST
START_TEST(rt_sigprocmask_refused) { signal_calls_refused("rt_sigprocmask"); }
END_TEST

/* A crash signal the caller blocked is pending when it makes the first
 * call: the counters that cannot fault are still tried (never
 * default-zero), and the signal stays pending. */
static void block_and_raise_sigsegv(void)
{
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGSEGV);
  if (pthread_sigmask(SIG_BLOCK, &set, 0) != 0) _exit(3);
  raise(SIGSEGV);
}

static void first_call_then_pending(char *report, size_t size)
{
  sigset_t pending;
  size_t len;
  first_call(report, size);
  len = strlen(report);
  if (sigpending(&pending) == 0 && sigismember(&pending, SIGSEGV))
    snprintf(report + len, size - len, " pending");
}

START_TEST(crash_signal_pending_in_the_caller)
{
  struct outcome free_choice, out;

  first_call_free(&free_choice);
  run_under(0, 0, block_and_raise_sigsegv, first_call_then_pending, &out);
  ck_assert_msg(out.result == SANDBOX_DONE, "%s", out.report);
  assert_counts(&out, "SIGSEGV blocked and pending");
  assert_same_counters(&out, &free_choice, "SIGSEGV blocked and pending", 1);
  ck_assert_msg(strstr(out.report, " pending") != 0,
                "SIGSEGV no longer pending: %s", out.report);
}
END_TEST

/* Another thread installs crash handlers over and over while the first
 * call runs (a crash reporter starting in parallel): no fault of the
 * probe may ever reach them. */
static volatile int installing = 1;

static void reporter_handler(int sig)
{
  (void) sig;
  _exit(99); /* a crash reporter: the process ends */
}

static void *install_handlers(void *unused)
{
  struct sigaction a;
  (void) unused;
  memset(&a, 0, sizeof a);
  a.sa_handler = reporter_handler;
  sigemptyset(&a.sa_mask);
  while (__atomic_load_n(&installing, __ATOMIC_RELAXED)) {
    sigaction(SIGSEGV, &a, 0);
    sigaction(SIGILL, &a, 0);
    sigaction(SIGBUS, &a, 0);
  }
  return 0;
}

static void first_call_beside_a_reporter(char *report, size_t size)
{
  pthread_t t;
  if (pthread_create(&t, 0, install_handlers, 0) != 0) _exit(4);
  first_call(report, size);
  __atomic_store_n(&installing, 0, __ATOMIC_RELAXED);
  pthread_join(t, 0);
}

START_TEST(handlers_installed_while_probing)
{
  struct outcome out;
  int i;

  for (i = 0; i < 20; i++) {
    run_under(0, 0, 0, first_call_beside_a_reporter, &out);
    assert_counts(&out, "crash handlers installed meanwhile");
  }
}
END_TEST

/* Disarming while another handler replaced the library's, with every
 * sleep interrupted: it ends (doc/security.md: every retry loop is
 * bounded). */
static void replacing_handler(int sig)
{
  (void) sig;
}

static void disarm_after_replacement(char *report, size_t size)
{
  struct sigaction a, seen;
  memset(&a, 0, sizeof a);
  a.sa_handler = replacing_handler;
  sigemptyset(&a.sa_mask);
  if (cpucycles_catch_arm(0) != 0) {
    snprintf(report, size, "not armed");
    return;
  }
  sigaction(SIGSEGV, &a, 0);
  cpucycles_catch_disarm();
  sigaction(SIGSEGV, 0, &seen);
  snprintf(report, size, "%s", seen.sa_handler == replacing_handler
                                 ? "disarmed" : "the replacement was removed");
}

START_TEST(eintr_on_every_sleep_while_disarming)
{
  static const struct refusal refused[] = {
    { "nanosleep", EINTR }, { "clock_nanosleep", EINTR },
    { "clock_nanosleep_time64", EINTR },
  };
  char report[256];
  enum sandbox_result r = sandbox_run(refused, 3, 0, disarm_after_replacement,
                                      report, sizeof report);
  ck_assert_msg(r != SANDBOX_HUNG, "disarming hangs: %s", report);
  ck_assert_msg(r == SANDBOX_DONE && strcmp(report, "disarmed") == 0, "%s", report);
}
END_TEST

int main(void)
{
  Suite *s;
  TCase *t;
  char why[256];

  if (!sandbox_available(why, sizeof why)) {
    printf("%s\n", why);
    return 77;
  }
  s = suite_create("sandbox");
  t = tcase_create("seccomp");
  unsetenv("CPUCYCLES_COUNTER");
  tcase_set_timeout(t, 3 * SANDBOX_DEADLINE);
  tcase_add_test(t, eintr_on_every_open);
  tcase_add_test(t, eintr_on_every_read);
  tcase_add_test(t, eintr_on_every_directory_read);
  tcase_add_test(t, cpucycles_open_survives_eintr_on_every_read);
  tcase_add_test(t, rt_sigpending_refused);
  tcase_add_test(t, rt_sigaction_refused);
  tcase_add_test(t, rt_sigprocmask_refused);
  tcase_add_test(t, crash_signal_pending_in_the_caller);
  tcase_add_test(t, handlers_installed_while_probing);
  tcase_add_test(t, eintr_on_every_sleep_while_disarming);
#if defined(__x86_64__) || defined(__i386__)
  tcase_add_test(t, stopped_clock_extend32);
#endif
#if defined(__x86_64__) || defined(__i386__)
  tcase_add_test(t, prctl_kills_named_os_clock);
  tcase_add_test(t, clocks_killed_named_counter_reads_none);
  tcase_add_test(t, prctl_eperm_rdtsc_allowed);
  tcase_add_test(t, prctl_enosys_rdtsc_allowed);
  tcase_add_test(t, prctl_eperm_rdtsc_disabled);
  tcase_add_test(t, prctl_enosys_rdtsc_disabled);
  tcase_add_test(t, prctl_einval_rdtsc_disabled);
#endif
  suite_add_tcase(s, t);
  return run_suite(s);
}
