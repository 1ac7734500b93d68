/* Tests for cpucycles-open's logic (src/open-counters.c), against fixture
 * trees: a temporary directory holding proc/sys/kernel/... and
 * sys/bus/event_source/devices/... files, passed as the root.  Privilege
 * and architecture are chosen by the test; writes can be replaced to fail
 * or to store something else.  Nothing here touches the real /proc or
 * /sys. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

/* mkdtemp, symlink and nftw are POSIX (XSI), hidden by -std=c11 alone. */
#if !defined(_GNU_SOURCE) && !defined(_XOPEN_SOURCE)
#define _XOPEN_SOURCE 700
#endif

#include <check.h>
#include "check-run.h"
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "open-counters.h"

#define PARANOID "/proc/sys/kernel/perf_event_paranoid"
#define WATCHDOG "/proc/sys/kernel/nmi_watchdog"
#define USER_ACCESS "/proc/sys/kernel/perf_user_access"
#define RDPMC_CPU "/sys/bus/event_source/devices/cpu/rdpmc"
#define RDPMC_CORE "/sys/bus/event_source/devices/cpu_core/rdpmc"
#define RDPMC_ATOM "/sys/bus/event_source/devices/cpu_atom/rdpmc"

static char root[256];
static char out[8192], err[8192];
static int writes;

static void path_of(char *buf, size_t len, const char *path)
{
  ck_assert_int_lt(snprintf(buf, len, "%s%s", root, path), (int) len);
}

static void make_dirs(const char *path)
{
  char buf[512];
  char *p;
  path_of(buf, sizeof buf, path);
  for (p = buf + strlen(root) + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    ck_assert(mkdir(buf, 0755) == 0 || errno == EEXIST);
    *p = '/';
  }
}

static void put(const char *path, const char *content)
{
  char buf[512];
  FILE *f;
  make_dirs(path);
  path_of(buf, sizeof buf, path);
  f = fopen(buf, "w");
  ck_assert_ptr_nonnull(f);
  fputs(content, f);
  ck_assert_int_eq(fclose(f), 0);
}

/* The file's content, or "(absent)". */
static const char *get(const char *path)
{
  static char content[128];
  char buf[512];
  FILE *f;
  size_t n;
  path_of(buf, sizeof buf, path);
  f = fopen(buf, "r");
  if (!f) return "(absent)";
  n = fread(content, 1, sizeof content - 1, f);
  content[n] = 0;
  fclose(f);
  return content;
}

static void setup(void)
{
  const char *tmp = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/test-open-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(root));
  writes = 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
  (void) st;
  (void) flag;
  (void) f;
  return remove(path);
}

/* Check runs the teardown only after a test passed: a failed test's tree
 * stays in TMPDIR for a look. */
static void teardown(void)
{
  nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A restrictive machine: Debian's paranoid 3, the watchdog on, RDPMC
 * disabled, on a hybrid Intel CPU. */
static void restrictive_hybrid(void)
{
  put(PARANOID, "3\n");
  put(WATCHDOG, "1\n");
  put(RDPMC_CORE, "0\n");
  put(RDPMC_ATOM, "0\n");
}

static int counting_write(const char *path, const char *text, size_t len)
{
  writes++;
  return open_counters_write_file(path, text, len);
}

static int failing_write(const char *path, const char *text, size_t len)
{
  (void) path;
  (void) text;
  (void) len;
  writes++;
  return EINVAL;
}

/* A kernel that takes the write but keeps a value of its own. */
static int stubborn_write(const char *path, const char *text, size_t len)
{
  (void) text;
  (void) len;
  writes++;
  return open_counters_write_file(path, "7\n", 2);
}

static int run_as(int privileged, int dry_run, enum open_arch arch, open_writer *write)
{
  struct open_config config;
  FILE *o = tmpfile(), *e = tmpfile();
  size_t n;
  int status;

  ck_assert_ptr_nonnull(o);
  ck_assert_ptr_nonnull(e);
  config.root = root;
  config.dry_run = dry_run;
  config.privileged = privileged;
  config.arch = arch;
  config.write = write ? write : counting_write;
  status = open_counters_run(&config, o, e);
  rewind(o);
  rewind(e);
  n = fread(out, 1, sizeof out - 1, o);
  out[n] = 0;
  n = fread(err, 1, sizeof err - 1, e);
  err[n] = 0;
  fclose(o);
  fclose(e);
  return status;
}

static int run(void)
{
  return run_as(1, 0, OPEN_ARCH_X86, 0);
}

#define assert_contains(text, what) \
  ck_assert_msg(strstr(text, what) != 0, "'%s' not in:\n%s", what, text)
#define assert_lacks(text, what) \
  ck_assert_msg(strstr(text, what) == 0, "'%s' in:\n%s", what, text)

/* Whether a line of text starts with prefix. */
static int has_line(const char *text, const char *prefix)
{
  size_t n = strlen(prefix);
  while (*text) {
    if (strncmp(text, prefix, n) == 0) return 1;
    text = strchr(text, '\n');
    if (!text) return 0;
    text++;
  }
  return 0;
}

START_TEST(writes_each_setting_and_says_how_to_undo_it)
{
  char undo[512];
  restrictive_hybrid();
  ck_assert_int_eq(run(), 0);
  ck_assert_str_eq(get(PARANOID), "2\n");
  ck_assert_str_eq(get(WATCHDOG), "0\n");
  ck_assert_str_eq(get(RDPMC_CORE), "2\n");
  ck_assert_str_eq(get(RDPMC_ATOM), "2\n");
  ck_assert_str_eq(get(RDPMC_CPU), "(absent)"); /* not created */
  ck_assert_int_eq(writes, 4);
  ck_assert_str_eq(err, "");
  assert_contains(out, "changed kernel.perf_event_paranoid from 3 to 2");
  assert_contains(out, "changed kernel.nmi_watchdog from 1 to 0");
  assert_contains(out, "changed cpu_core/rdpmc from 0 to 2");
  assert_contains(out, "changed cpu_atom/rdpmc from 0 to 2");
  path_of(undo, sizeof undo, "/proc/sys/kernel/perf_event_paranoid");
  assert_contains(out, undo);
  assert_contains(out, "undo: echo 3 > ");
  assert_contains(out, "undo: echo 1 > ");
  assert_contains(out, "until the next reboot");
}
END_TEST

START_TEST(lowers_paranoid_only_to_2)
{
  put(PARANOID, "4\n"); /* Ubuntu's */
  ck_assert_int_eq(run(), 0);
  ck_assert_str_eq(get(PARANOID), "2\n");
}
END_TEST

START_TEST(permissive_values_are_left_alone)
{
  put(PARANOID, "-1\n");
  put(WATCHDOG, "0\n");
  put(RDPMC_CPU, "2\n");
  put(USER_ACCESS, "2\n"); /* riscv's legacy mode, more than enough */
  ck_assert_int_eq(run_as(1, 0, OPEN_ARCH_RISCV, 0), 0);
  ck_assert_int_eq(writes, 0);
  ck_assert_str_eq(get(PARANOID), "-1\n");
  ck_assert_str_eq(get(WATCHDOG), "0\n");
  ck_assert_str_eq(get(RDPMC_CPU), "2\n");
  ck_assert_str_eq(get(USER_ACCESS), "2\n");
  assert_contains(out, "unchanged kernel.perf_event_paranoid = -1");
  assert_contains(out, "unchanged kernel.nmi_watchdog = 0");
  assert_contains(out, "unchanged kernel.perf_user_access = 2");
  ck_assert_msg(!has_line(out, "changed "), "a change in:\n%s", out);
  assert_lacks(out, "undo");
  ck_assert_str_eq(err, "");
}
END_TEST

/* amd64-pmcff executes RDPMC with no perf event: the kernel's default 1
 * is raised to 2, as libcpucycles' cpucycles-open does; 2 stays. */
START_TEST(rdpmc_is_raised_to_2)
{
  put(RDPMC_CPU, "1\n");
  put(RDPMC_CORE, "2\n");
  ck_assert_int_eq(run(), 0);
  ck_assert_int_eq(writes, 1);
  ck_assert_str_eq(get(RDPMC_CPU), "2\n");
  ck_assert_str_eq(get(RDPMC_CORE), "2\n");
  assert_contains(out, "changed cpu/rdpmc from 1 to 2");
  assert_contains(out, "unchanged cpu_core/rdpmc = 2");
}
END_TEST

START_TEST(paranoid_2_and_1_are_enough)
{
  put(PARANOID, "2\n");
  ck_assert_int_eq(run(), 0);
  ck_assert_int_eq(writes, 0);
  put(PARANOID, "1\n");
  ck_assert_int_eq(run(), 0);
  ck_assert_int_eq(writes, 0);
  ck_assert_str_eq(get(PARANOID), "1\n");
}
END_TEST

START_TEST(perf_user_access_is_enabled)
{
  put(USER_ACCESS, "0\n");
  put(PARANOID, "2\n");
  ck_assert_int_eq(run_as(1, 0, OPEN_ARCH_ARM64, 0), 0);
  ck_assert_str_eq(get(USER_ACCESS), "1\n");
  assert_contains(out, "changed kernel.perf_user_access from 0 to 1");
  /* and what a sysctl cannot do */
  assert_contains(out, "kernel module");
}
END_TEST

START_TEST(dry_run_changes_nothing)
{
  restrictive_hybrid();
  put(USER_ACCESS, "0\n");
  ck_assert_int_eq(run_as(1, 1, OPEN_ARCH_X86, 0), 0);
  ck_assert_int_eq(writes, 0);
  ck_assert_str_eq(get(PARANOID), "3\n");
  ck_assert_str_eq(get(WATCHDOG), "1\n");
  ck_assert_str_eq(get(RDPMC_CORE), "0\n");
  ck_assert_str_eq(get(RDPMC_ATOM), "0\n");
  ck_assert_str_eq(get(USER_ACCESS), "0\n");
  assert_contains(out, "would change kernel.perf_event_paranoid from 3 to 2");
  assert_contains(out, "would change kernel.nmi_watchdog from 1 to 0");
  ck_assert_msg(!has_line(out, "changed "), "a change in:\n%s", out);
  assert_lacks(out, "until the next reboot");
}
END_TEST

START_TEST(dry_run_needs_no_privilege)
{
  restrictive_hybrid();
  ck_assert_int_eq(run_as(0, 1, OPEN_ARCH_X86, 0), 0);
  ck_assert_int_eq(writes, 0);
  assert_contains(out, "would change kernel.perf_event_paranoid from 3 to 2");
  ck_assert_str_eq(get(PARANOID), "3\n");
}
END_TEST

START_TEST(refuses_without_privilege)
{
  restrictive_hybrid();
  ck_assert_int_eq(run_as(0, 0, OPEN_ARCH_X86, 0), 1);
  ck_assert_int_eq(writes, 0);
  ck_assert_str_eq(get(PARANOID), "3\n");
  ck_assert_str_eq(get(WATCHDOG), "1\n");
  ck_assert_str_eq(out, "");
  assert_contains(err, "must be run as root");
  assert_contains(err, "--dry-run");
}
END_TEST

START_TEST(read_back_mismatch_is_reported)
{
  put(PARANOID, "3\n");
  put(WATCHDOG, "1\n");
  ck_assert_int_eq(run_as(1, 0, OPEN_ARCH_X86, stubborn_write), 1);
  ck_assert_int_eq(writes, 2);
  assert_contains(err, "kernel.perf_event_paranoid: wrote 2 but it reads back 7");
  assert_contains(err, "kernel.nmi_watchdog: wrote 0 but it reads back 7");
  ck_assert_msg(!has_line(out, "changed "), "a change in:\n%s", out);
}
END_TEST

START_TEST(write_failure_is_reported_and_the_rest_done)
{
  put(PARANOID, "3\n");
  ck_assert_int_eq(run_as(1, 0, OPEN_ARCH_X86, failing_write), 1);
  ck_assert_str_eq(get(PARANOID), "3\n");
  assert_contains(err, "kernel.perf_event_paranoid: cannot write 2");
  assert_contains(err, strerror(EINVAL));
  ck_assert_msg(!has_line(out, "changed "), "a change in:\n%s", out);
}
END_TEST

START_TEST(missing_files_are_skipped_and_nothing_is_created)
{
  ck_assert_int_eq(run(), 0);
  ck_assert_int_eq(writes, 0);
  ck_assert_str_eq(get(PARANOID), "(absent)");
  ck_assert_str_eq(get(WATCHDOG), "(absent)");
  ck_assert_str_eq(get(RDPMC_CPU), "(absent)");
  assert_contains(out, "absent kernel.perf_event_paranoid");
  assert_contains(out, "absent kernel.nmi_watchdog");
  assert_contains(out, "nothing to change");
  ck_assert_str_eq(err, "");
}
END_TEST

START_TEST(values_that_are_not_numbers_are_not_touched)
{
  static const char *const bad[] = {
    "", "\n", "abc\n", "2 3\n", "2\n\n", " 2\n", "+2\n", "-\n", "2x",
    "99999999999999999999\n", "0x2\n"
  };
  size_t i;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    put(PARANOID, bad[i]);
    writes = 0;
    ck_assert_int_eq(run(), 1);
    ck_assert_int_eq(writes, 0);
    ck_assert_str_eq(get(PARANOID), bad[i]);
    assert_contains(err, "kernel.perf_event_paranoid");
    assert_contains(err, "left alone");
  }
}
END_TEST

START_TEST(a_value_without_newline_is_read)
{
  put(PARANOID, "3");
  ck_assert_int_eq(run(), 0);
  ck_assert_str_eq(get(PARANOID), "2\n");
}
END_TEST

START_TEST(a_symlink_is_not_followed)
{
  char target[512], link[512];
  put("/elsewhere", "3\n");
  make_dirs(PARANOID);
  path_of(target, sizeof target, "/elsewhere");
  path_of(link, sizeof link, PARANOID);
  ck_assert_int_eq(symlink(target, link), 0);
  ck_assert_int_eq(run(), 1);
  ck_assert_int_eq(writes, 0);
  ck_assert_str_eq(get("/elsewhere"), "3\n");
  assert_contains(err, "kernel.perf_event_paranoid");
}
END_TEST

START_TEST(a_directory_is_not_a_value)
{
  char dir[512];
  make_dirs(PARANOID);
  path_of(dir, sizeof dir, PARANOID);
  ck_assert_int_eq(mkdir(dir, 0755), 0);
  ck_assert_int_eq(run(), 1);
  ck_assert_int_eq(writes, 0);
  assert_contains(err, "kernel.perf_event_paranoid: cannot read");
}
END_TEST

START_TEST(arm64_says_what_it_cannot_do)
{
  put(PARANOID, "2\n");
  ck_assert_int_eq(run_as(1, 0, OPEN_ARCH_ARM64, 0), 0);
  /* no perf_user_access: an older kernel */
  assert_contains(out, "kernel.perf_user_access");
  assert_contains(out, "kernel module");
  assert_contains(out, "arm64-pmc");
}
END_TEST

START_TEST(x86_has_no_arm_note)
{
  put(PARANOID, "2\n");
  ck_assert_int_eq(run(), 0);
  assert_lacks(out, "kernel module");
}
END_TEST

/* A virtual machine without a virtual PMU: the kernel lists only its
 * software event sources.  Nothing cpucycles-open writes would help, and
 * it says so instead of "nothing to change". */
static void no_pmu(void)
{
  put("/sys/bus/event_source/devices/software/type", "1\n");
  put("/sys/bus/event_source/devices/tracepoint/type", "2\n");
  put("/sys/bus/event_source/devices/msr/type", "9\n");
}

START_TEST(no_pmu_says_nothing_would_help)
{
  put(PARANOID, "2\n");
  put(WATCHDOG, "0\n");
  no_pmu();
  ck_assert_int_eq(run_as(0, 1, OPEN_ARCH_X86, 0), 0);
  ck_assert_msg(has_line(out, "note: no hardware performance counters here: "
                         "/sys/bus/event_source/devices has no cpu, cpu_core or "
                         "cpu_atom"), "no note in:\n%s", out);
  ck_assert_msg(has_line(out, "nothing cpucycles-open can change would help here"),
                "no conclusion in:\n%s", out);
  ck_assert_msg(!has_line(out, "nothing to change\n"), "nothing to change in:\n%s", out);
  ck_assert_int_eq(writes, 0);

  /* settings it would change: it says so, and that they would not help */
  put(PARANOID, "3\n");
  ck_assert_int_eq(run_as(0, 1, OPEN_ARCH_X86, 0), 0);
  ck_assert(has_line(out, "would change kernel.perf_event_paranoid from 3 to 2"));
  ck_assert(has_line(out, "note: no hardware performance counters here: "));

  /* arm64: no PMU directory lists CPUs */
  ck_assert_int_eq(run_as(0, 1, OPEN_ARCH_ARM64, 0), 0);
  ck_assert_msg(has_line(out, "note: no hardware performance counters here: "
                         "/sys/bus/event_source/devices has no PMU that lists its CPUs"),
                "no arm64 note in:\n%s", out);
}
END_TEST

START_TEST(a_pmu_gets_no_such_note)
{
  put(PARANOID, "2\n");
  put(WATCHDOG, "0\n");
  no_pmu();
  put(RDPMC_CPU, "1\n");
  ck_assert_int_eq(run_as(0, 1, OPEN_ARCH_X86, 0), 0);
  assert_lacks(out, "no hardware performance counters");
  assert_lacks(out, "would help");

  put("/sys/bus/event_source/devices/armv8_pmuv3_0/cpus", "0-7\n");
  ck_assert_int_eq(run_as(0, 1, OPEN_ARCH_ARM64, 0), 0);
  assert_lacks(out, "no hardware performance counters");

  /* no listing of event sources at all: it cannot tell, and says nothing */
  teardown();
  setup();
  put(PARANOID, "2\n");
  ck_assert_int_eq(run_as(0, 1, OPEN_ARCH_X86, 0), 0);
  assert_lacks(out, "no hardware performance counters");
  ck_assert(has_line(out, "nothing to change"));
}
END_TEST

/* stdout buffered, stderr not, both into one file (2>&1): a failure comes
 * after the lines printed before it. */
START_TEST(failures_keep_their_place_among_the_lines)
{
  struct open_config config = {0};
  FILE *o = tmpfile(), *e;
  char all[8192];
  size_t n;
  const char *unchanged, *failed;
  ck_assert_ptr_nonnull(o);
  e = fdopen(dup(fileno(o)), "w");
  ck_assert_ptr_nonnull(e);
  setvbuf(e, 0, _IONBF, 0);
  put(WATCHDOG, "0\n");
  put(RDPMC_CPU, "x\n");
  config.root = root;
  config.privileged = 1;
  config.arch = OPEN_ARCH_X86;
  config.write = counting_write;
  ck_assert_int_eq(open_counters_run(&config, o, e), 1);
  fflush(o);
  fclose(e);
  rewind(o);
  n = fread(all, 1, sizeof all - 1, o);
  all[n] = 0;
  fclose(o);
  unchanged = strstr(all, "unchanged kernel.nmi_watchdog");
  failed = strstr(all, "cpucycles-open: cpu/rdpmc");
  ck_assert_ptr_nonnull(unchanged);
  ck_assert_ptr_nonnull(failed);
  ck_assert_msg(unchanged < failed, "out of order:\n%s", all);
}
END_TEST

START_TEST(a_too_long_root_is_an_error)
{
  static char long_root[5000];
  struct open_config config = {0};
  FILE *o = tmpfile(), *e = tmpfile();
  memset(long_root, 'a', sizeof long_root - 1);
  config.root = long_root;
  config.privileged = 1;
  config.arch = OPEN_ARCH_X86;
  config.write = counting_write;
  ck_assert_int_eq(open_counters_run(&config, o, e), 1);
  ck_assert_int_eq(writes, 0);
  fclose(o);
  fclose(e);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("cpucycles-open");
  TCase *c = tcase_create("fixture trees");
  tcase_add_checked_fixture(c, setup, teardown);
  tcase_add_test(c, writes_each_setting_and_says_how_to_undo_it);
  tcase_add_test(c, lowers_paranoid_only_to_2);
  tcase_add_test(c, permissive_values_are_left_alone);
  tcase_add_test(c, paranoid_2_and_1_are_enough);
  tcase_add_test(c, rdpmc_is_raised_to_2);
  tcase_add_test(c, perf_user_access_is_enabled);
  tcase_add_test(c, dry_run_changes_nothing);
  tcase_add_test(c, dry_run_needs_no_privilege);
  tcase_add_test(c, refuses_without_privilege);
  tcase_add_test(c, read_back_mismatch_is_reported);
  tcase_add_test(c, write_failure_is_reported_and_the_rest_done);
  tcase_add_test(c, missing_files_are_skipped_and_nothing_is_created);
  tcase_add_test(c, values_that_are_not_numbers_are_not_touched);
  tcase_add_test(c, a_value_without_newline_is_read);
  tcase_add_test(c, a_symlink_is_not_followed);
  tcase_add_test(c, a_directory_is_not_a_value);
  tcase_add_test(c, arm64_says_what_it_cannot_do);
  tcase_add_test(c, x86_has_no_arm_note);
  tcase_add_test(c, no_pmu_says_nothing_would_help);
  tcase_add_test(c, a_pmu_gets_no_such_note);
  tcase_add_test(c, failures_keep_their_place_among_the_lines);
  tcase_add_test(c, a_too_long_root_is_an_error);
  suite_add_tcase(s, c);
  return run_suite(s);
}
