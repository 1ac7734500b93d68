/* cpucycles-info --explain and --json (src/explain.c): every explanation
 * class through the library's seams (fake counter tables, the perf opener,
 * fixture trees for /etc, /proc and /sys built in TMPDIR), the lines
 * checked with the regular expressions a script would use. */
#include <config.h>
#include <check.h>
#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "explain.h"
#include "checked-by.h"
#include "fake-counters.h"
#include "fixture-tree.h"
#include "seams.h"

static const struct counter *table[FAKE_SLOTS];
static char root[256];
static struct explain e;

/* ---- fixture trees ---- */

static void put(const char *path, const char *text)
{
  fixture_put(root, path, text);
}

static void rmdir_tree(const char *path)
{
  char full[512];
  snprintf(full, sizeof full, "%s%s", root, path);
  fixture_remove(full);
}

/* The fakes tick at no real rate: no clock checks what they state. */
static long long no_clock(void) { return -1; }

static void setup(void)
{
  int i;
  cpucycles_multiplier_set_clock(no_clock);
  fakes_reset();
  for (i = 0; i < FAKE_SLOTS; i++) table[i] = &fake_counters[i];
  snprintf(root, sizeof root, "%s/test-explain-XXXXXX",
           getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(root));
  /* a known frequency, unless the test writes another */
  put("/etc/cpucyclespersecond", "2400000000\n");
}

static void teardown(void)
{
  fixture_remove(root);
}

/* ---- reading what was printed ---- */

static char printed[65536];

static void print_text(void)
{
  FILE *f = tmpfile();
  size_t n;
  ck_assert_ptr_nonnull(f);
  explain_print_text(f, &e);
  rewind(f);
  n = fread(printed, 1, sizeof printed - 1, f);
  printed[n] = 0;
  fclose(f);
}

static void print_json(void)
{
  FILE *f = tmpfile();
  size_t n;
  ck_assert_ptr_nonnull(f);
  explain_print_json(f, &e, "0");
  rewind(f);
  n = fread(printed, 1, sizeof printed - 1, f);
  printed[n] = 0;
  fclose(f);
}

/* Some line of the output matches the extended regular expression. */
static int has_line(const char *pattern)
{
  regex_t re;
  char *copy = strdup(printed), *line, *save = 0;
  int found = 0;

  ck_assert_int_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
  for (line = strtok_r(copy, "\n", &save); line && !found;
       line = strtok_r(0, "\n", &save))
    found = regexec(&re, line, 0, 0, 0) == 0;
  regfree(&re);
  free(copy);
  return found;
}

#define ck_assert_line(pattern) \
  ck_assert_msg(has_line(pattern), "no line matches %s in:\n%s", pattern, printed)
#define ck_assert_no_line(pattern) \
  ck_assert_msg(!has_line(pattern), "a line matches %s in:\n%s", pattern, printed)

static void explain_table(int count, const char *name)
{
  ck_assert_int_eq(explain_collect(&e, root, table, count, 0, name), 0);
  print_text();
}

/* Every counter has one line, in probe order, chosen or dropped. */
START_TEST(every_counter_has_a_line_in_order)
{
  fakes[0].failure = FAKE_SETUP_REFUSES;
  fakes[2].steps[0] = 7;
  explain_table(3, 0);
  ck_assert_int_eq(e.nreports, 4);
  ck_assert_ptr_nonnull(strstr(printed, "counter fake-0: dropped: "));
  ck_assert(strstr(printed, "counter fake-0:") < strstr(printed, "counter fake-1:"));
  ck_assert(strstr(printed, "counter fake-1:") < strstr(printed, "counter fake-2:"));
  ck_assert(strstr(printed, "counter fake-2:") < strstr(printed, "counter default-zero:"));
  ck_assert_line("^counter fake-1: chosen: precision 1 cycles, the best$");
  ck_assert_line("^counter fake-2: dropped: precision 17 cycles \\(10 for its place in "
                 "the order\\), not better than fake-1's 1$");
  ck_assert_line("^counter default-zero: dropped: not needed: fake-1 works$");
  /* no CPUCYCLES_COUNTER, no word about it */
  ck_assert_no_line("^override ");
}
END_TEST

/* "The earlier on a tie" only where another counter tied. */
START_TEST(a_tie_is_named_only_when_there_was_one)
{
  /* 13 and 3 + 10 for its place in the order: a tie */
  fakes[1].steps[0] = 13;
  fakes[2].steps[0] = 3;
  explain_table(3, 0);
  ck_assert_line("^counter fake-0: chosen: precision 1 cycles, the best$");

  fakes[0].failure = FAKE_SETUP_REFUSES;
  explain_table(3, 0);
  ck_assert_line("^counter fake-1: chosen: precision 13 cycles, the best "
                 "\\(fake-2 ties at 13: the earlier in the order wins\\)$");
  ck_assert_line("^counter fake-2: dropped: precision 13 cycles \\(10 for its place in "
                 "the order\\), not better than fake-1's 13$");
}
END_TEST

/* A counter of libcpucycles' list that was not built here: its line, at
 * its place, says so, and it adds nothing to the bump of the next. */
START_TEST(counter_not_built_has_its_line)
{
  static const struct counter not_built = { "default-mach", 0, 0, 0, 0, COUNTER_TRIES };
  table[1] = &not_built;
  fakes[0].steps[0] = 3;
  fakes[2].steps[0] = 30;
  explain_table(3, 0);
  ck_assert_int_eq(e.nreports, 4);
  ck_assert_int_eq(e.reports[1].index, 1);
  ck_assert(strstr(printed, "counter fake-0:") < strstr(printed, "counter default-mach:"));
  ck_assert(strstr(printed, "counter default-mach:") < strstr(printed, "counter fake-2:"));
  ck_assert_line("^counter default-mach: dropped: not built into this library "
                 "\\(it does not compile for this system, or configure left it out\\)$");
  ck_assert_line("^counter fake-2: dropped: precision 40 cycles \\(10 for its place "
                 "in the order\\), not better than fake-0's 3$");
}
END_TEST

#ifndef _WIN32
/* A counter that may fault, not tried because its fault could not have
 * been caught (a SIGSEGV blocked and pending): its line says why, and the
 * asked counters are still tried. */
START_TEST(not_tried_says_why)
{
  sigset_t block;
  /* valgrind 3.19 delivers the blocked SIGSEGV that raise() left
   * pending (test-works skips its pending tests there too) */
  if (RUNNING_ON_VALGRIND) return;
  sigemptyset(&block);
  sigaddset(&block, SIGSEGV);
  ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &block, 0), 0);
  raise(SIGSEGV); /* blocked: pending */
  /* qemu-user and valgrind do not report it pending: nothing to test */
  ck_assert_int_eq(sigpending(&block), 0);
  if (!sigismember(&block, SIGSEGV)) {
    fprintf(stderr, "sigpending() misses a blocked pending SIGSEGV: skipped\n");
    return;
  }
  fake_counters[1].check = COUNTER_ASKS;
  explain_table(2, 0);
  ck_assert_line("^counter fake-0: dropped: not tried: SIGSEGV \\(signal 11\\) "
                 "blocked and pending in this thread, and this counter could "
                 "fault; a first call from a thread without that pending "
                 "signal would try it$");
  ck_assert_line("^counter fake-1: chosen: ");
}
END_TEST
#endif

START_TEST(perf_refusal_says_paranoid_and_the_action)
{
  fakes[0].failure = FAKE_SETUP_REFUSES;
  fakes[0].info.refusal = CPUCYCLES_REFUSAL_PERF_OPEN;
  fakes[0].info.refusal_errno = EACCES;
  put("/proc/sys/kernel/perf_event_paranoid", "3\n");
  explain_table(2, 0);
  ck_assert_line("^counter fake-0: dropped: perf_event_open: EACCES "
                 "\\(kernel\\.perf_event_paranoid = 3\\); cpucycles-open or "
                 "sysctl kernel\\.perf_event_paranoid=2 would allow it$");

  /* 4, as some distributions patch it: the same way out */
  put("/proc/sys/kernel/perf_event_paranoid", "4\n");
  explain_table(2, 0);
  ck_assert_line("^counter fake-0: dropped: perf_event_open: EACCES "
                 "\\(kernel\\.perf_event_paranoid = 4\\); cpucycles-open or "
                 "sysctl kernel\\.perf_event_paranoid=2 would allow it$");

  /* allowed by the setting, refused all the same */
  put("/proc/sys/kernel/perf_event_paranoid", "1\n");
  explain_table(2, 0);
  ck_assert_line("^counter fake-0: dropped: perf_event_open: EACCES "
                 "\\(kernel\\.perf_event_paranoid = 1\\); the setting allows it");

  /* no cycles event at all */
  fakes_reset();
  fakes[0].failure = FAKE_SETUP_REFUSES;
  fakes[0].info.refusal = CPUCYCLES_REFUSAL_PERF_OPEN;
  fakes[0].info.refusal_errno = ENOENT;
  explain_table(2, 0);
  ck_assert_line("^counter fake-0: dropped: perf_event_open: ENOENT \\(the "
                 "kernel has no hardware cycles event here\\); ");
}
END_TEST

/* The real perf counters, refused by the injected opener. */
static int refusing_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                         int group_fd, unsigned long flags)
{
  (void) attr; (void) pid; (void) cpu; (void) group_fd; (void) flags;
  errno = EACCES;
  return -1;
}

START_TEST(real_perf_counter_refused_by_the_kernel)
{
#ifdef CPUCYCLES_PERF_AVAILABLE
  int i, n = 0;
  for (i = 0; i < cpucycles_counter_count; i++)
    if (cpucycles_counter_table[i]->setup  /* built, not only listed */
        && strstr(cpucycles_counter_table[i]->name, "perf"))
      table[n++] = cpucycles_counter_table[i];
  if (n == 0) return;
  cpucycles_perf_set_opener(refusing_open);
  put("/proc/sys/kernel/perf_event_paranoid", "3\n");
  ck_assert_int_eq(explain_collect(&e, root, table, n, 0, 0), 0);
  print_text();
  for (i = 0; i < n; i++) {
    char pattern[256];
    snprintf(pattern, sizeof pattern,
             "^counter %s: dropped: perf_event_open: EACCES "
             "\\(kernel\\.perf_event_paranoid = 3\\); cpucycles-open or sysctl "
             "kernel\\.perf_event_paranoid=2 would allow it$", table[i]->name);
    ck_assert_line(pattern);
  }
  ck_assert_line("^counter default-zero: chosen: no other counter works$");
  cpucycles_perf_set_opener(0);
#endif
}
END_TEST

/* A switch as a counter's setup reports reading it. */
static struct counter_setting rdpmc_said(long value)
{
  struct counter_setting s = { CPUCYCLES_SETTING_RDPMC, 0, 1 };
  s.value = value;
  return s;
}

static struct counter_setting user_access_said(long value)
{
  struct counter_setting s = { CPUCYCLES_SETTING_PERF_USER_ACCESS, 0, 1 };
  s.value = value;
  return s;
}

/* The RDPMC switch and user-space reads, as amd64-pmcff, amd64-perfpmc
 * and arm64-perfpmc would say them: the fakes take those names. */
START_TEST(rdpmc_refusals)
{
  struct counter named[3];
  named[0] = fake_counters[0];
  named[0].name = "amd64-pmcff";
  named[1] = fake_counters[1];
  named[1].name = "amd64-perfpmc";
  named[2] = fake_counters[2];
  named[2].name = "arm64-perfpmc";
  table[0] = &named[0];
  table[1] = &named[1];
  table[2] = &named[2];
  fakes[0].failure = FAKE_SETUP_REFUSES;
  fakes[0].info.refusal = CPUCYCLES_REFUSAL_RDPMC_SWITCH;
  fakes[1].failure = FAKE_SETUP_REFUSES;
  fakes[1].info.refusal = CPUCYCLES_REFUSAL_NO_USER_RDPMC;
  fakes[2].failure = FAKE_SETUP_REFUSES;
  fakes[2].info.refusal = CPUCYCLES_REFUSAL_NO_USER_RDPMC;
  /* the switches as the reports carry them (amd64-pmcff's setup reads
   * the rdpmc switch, the rdcycle counters' kernel.perf_user_access) */
  fakes[0].info.setting = rdpmc_said(0);
  fakes[2].info.setting = user_access_said(0);
  explain_table(4, 0);
  ck_assert_line("^counter amd64-pmcff: dropped: RDPMC not allowed \\(rdpmc = 0\\); "
                 "cpucycles-open \\(rdpmc = 2\\) would allow it$");
  ck_assert_line("^counter amd64-perfpmc: dropped: cap_user_rdpmc 0: .* "
                 "\\(rdpmc = 0\\); cpucycles-open \\(rdpmc = 2\\) would allow it$");
  ck_assert_line("^counter arm64-perfpmc: dropped: cap_user_rdpmc 0: .* "
                 "\\(kernel\\.perf_user_access = 0\\); cpucycles-open or sysctl "
                 "kernel\\.perf_user_access=1 would allow it$");
  ck_assert_line("^counter fake-3: chosen: ");
}
END_TEST

/* The switches come from the probe's reports, never from a second read:
 * files that say otherwise beside the library are not looked at, and a
 * switch no counter read is unknown (JSON null). */
START_TEST(settings_are_the_reports)
{
  struct counter named = fake_counters[0];
  named.name = "amd64-pmcff";
  table[0] = &named;
  fakes[0].failure = FAKE_SETUP_REFUSES;
  fakes[0].info.refusal = CPUCYCLES_REFUSAL_RDPMC_SWITCH;
  fakes[0].info.setting = rdpmc_said(1);
  put("/sys/bus/event_source/devices/cpu/rdpmc", "0\n");
  put("/sys/bus/event_source/devices/cpu_core/rdpmc", "0\n");
  put("/proc/sys/kernel/perf_user_access", "0\n");
  explain_table(2, 0);
  ck_assert_line("^counter amd64-pmcff: dropped: RDPMC not allowed: rdpmc "
                 "switch 1 and no perf event");
  ck_assert_int_eq(e.rdpmc.known, 1);
  ck_assert_int_eq(e.rdpmc.value, 1);
  ck_assert_int_eq(e.perf_user_access.known, 0);
  print_json();
  ck_assert_msg(strstr(printed, "\"rdpmc\": 1,") != 0, "%s", printed);
  ck_assert_msg(strstr(printed, "\"perf_user_access\": null") != 0, "%s",
                printed);

  /* no counter read the switch (not tried, or another counter named) */
  fakes[0].info.setting.name = 0;
  explain_table(2, 0);
  ck_assert_int_eq(e.rdpmc.known, 0);
  ck_assert_line("^counter amd64-pmcff: dropped: RDPMC not allowed: rdpmc "
                 "switch 1 and no perf event");
}
END_TEST

#ifdef CPUCYCLES_PERF_AVAILABLE
static int devnull_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                        int group_fd, unsigned long flags)
{
  (void) attr; (void) pid; (void) cpu; (void) group_fd; (void) flags;
  return open("/dev/null", O_RDONLY | O_CLOEXEC);
}
#endif

/* A fake's setup hook doing what a perf counter's setup does first: open
 * the cycles event, whose first success makes the library look for the
 * core PMUs (under the fixture tree, through a stand-in opener).  The tool
 * reports what that look found (the root stays set for it to ask); the
 * root is set anew so that each probe looks again. */
static void opens_a_perf_event(struct fake *f)
{
#ifdef CPUCYCLES_PERF_AVAILABLE
  struct cpucycles_perf_event ev = { 0 };
  cpucycles_perf_set_sysfs_root(0);
  cpucycles_perf_core_pmus(0, 0);
  cpucycles_perf_set_sysfs_root(root);
  cpucycles_perf_set_opener(devnull_open);
  if (cpucycles_perf_open(&ev, 0, 0) == 0) cpucycles_perf_close(&ev);
  cpucycles_perf_set_opener(0);
#endif
  (void) f;
}

/* A hybrid CPU: the core PMUs as sysfs lists them. */
static void put_alder_lake(void)
{
  put("/sys/bus/event_source/devices/cpu_core/type", "4\n");
  put("/sys/bus/event_source/devices/cpu_core/cpus", "0-15\n");
  put("/sys/bus/event_source/devices/cpu_atom/type", "10\n");
  put("/sys/bus/event_source/devices/cpu_atom/cpus", "16-23\n");
  put("/sys/bus/event_source/devices/software/type", "1\n");
}

/* The perf counters' refusals on hybrid CPUs, as amd64-perfpmcff and
 * arm64-perfpmc would say them. */
START_TEST(hybrid_refusals)
{
  struct counter named[2];
  int i;
  named[0] = fake_counters[0];
  named[0].name = "amd64-perfpmcff";
  named[1] = fake_counters[1];
  named[1].name = "arm64-perfpmc";
  table[0] = &named[0];
  table[1] = &named[1];
  fakes[0].failure = FAKE_SETUP_REFUSES;
  fakes[0].info.refusal = CPUCYCLES_PERF_REFUSAL_HYBRID;
  fakes[1].failure = FAKE_SETUP_REFUSES;
  fakes[1].info.refusal = CPUCYCLES_PERF_REFUSAL_PMUS;
  fakes[1].hook = opens_a_perf_event; /* finds the 7 below */
  put_alder_lake();
  for (i = 0; i < 5; i++) {
    char path[128];
    snprintf(path, sizeof path, "/sys/bus/event_source/devices/armv9_c%d/type", i);
    put(path, i == 0 ? "20\n" : "21\n");
    snprintf(path, sizeof path, "/sys/bus/event_source/devices/armv9_c%d/cpus", i);
    put(path, "0\n");
  }
  explain_table(3, 0);
  ck_assert_line("^counter amd64-perfpmcff: dropped: a hybrid CPU: the fixed "
                 "counter counts one core type only; amd64-perfpmc sums the "
                 "core types' events$");
  ck_assert_line("^counter arm64-perfpmc: dropped: more core PMUs than the perf "
                 "counters open events on \\(7 core PMUs, at most 4\\)$");
}
END_TEST

START_TEST(crashes_say_the_signal_and_where)
{
  struct counter pmcff = fake_counters[2];
  pmcff.name = "amd64-pmcff";
  table[2] = &pmcff;
  fakes[0].failure = FAKE_SETUP_SIGSEGV;
  fakes[1].failure = FAKE_READ_SIGILL;
  fakes[2].failure = FAKE_SETUP_SIGSEGV;
  fakes[2].info.setting = rdpmc_said(0);
  explain_table(4, 0);
  ck_assert_line("^counter fake-0: dropped: crashed with SIGSEGV in setup$");
  ck_assert_line("^counter fake-1: dropped: crashed with SIGILL in its reads$");
  ck_assert_line("^counter amd64-pmcff: dropped: crashed with SIGSEGV in setup "
                 "\\(RDPMC is off: rdpmc = 0\\); cpucycles-open \\(rdpmc = 2\\) "
                 "would allow it$");

  /* the switch says always (on a hybrid Intel machine, cpu_core's: which
   * file is lib/rdpmc.c's question, test-counters') */
  fakes[2].info.setting = rdpmc_said(2);
  explain_table(4, 0);
  ck_assert_line("^counter amd64-pmcff: dropped: crashed with SIGSEGV in setup "
                 "\\(RDPMC is allowed, rdpmc = 2: this CPU has no fixed counter 1");

  /* no switch to ask (where the counter is tried with its fault caught) */
  fakes[2].info.setting.known = 0;
  explain_table(4, 0);
  ck_assert_line("^counter amd64-pmcff: dropped: crashed with SIGSEGV in setup "
                 "\\(no rdpmc switch to ask");
}
END_TEST

START_TEST(misfit_says_the_frequencies)
{
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.frequency = 72000000LL;
  put("/etc/cpucyclespersecond", "2400000000\n");
  explain_table(2, 0);
  ck_assert_line("^counter fake-0: dropped: 2400000000 Hz is not close to "
                 "k/2\\^j times 72 MHz \\(ratio 33\\.333333: no 2\\^j up to 1024 "
                 "brings it within 0\\.2 of an integer\\); the "
                 "frequency estimate from /etc/cpucyclespersecond may be wrong");

  /* 720 MHz, against the default estimate: 3.3333 */
  fakes[0].info.frequency = 720000000LL;
  put("/etc/cpucyclespersecond", "x\n");
  explain_table(2, 0);
  ck_assert_line("^counter fake-0: dropped: 2399987654 Hz is not close to "
                 "k/2\\^j times 720 MHz .*; no frequency source answered");
}
END_TEST

/* A timer of unknown rate whose measured multiplier fits no k/2^j, and
 * one that did not move enough to be measured. */
START_TEST(misfit_of_a_measured_timer)
{
  fakes[0].info.kind = COUNTER_OFFCORE;
  fakes[0].info.rate_unknown = 1;
  e.reports[0].info = fakes[0].info;
  e.reports[0].outcome = PROBE_MISFIT;
  e.reports[0].persecond = 2400000000LL;
  e.reports[0].ratio = 33.333333;
  e.reports[0].name = "fake-0";
  e.count = 1;
  e.nreports = 1;
  e.chosen = -1;
  print_text();
  ck_assert_line("^counter fake-0: dropped: its rate is not stated here, and "
                 "the 33\\.333333 cycles per tick measured \\(three estimates\\) "
                 "come within 0\\.2 of no k/2\\^j, 2\\^j up to 1024; the "
                 "timer's frequency, where firmware or the OS can state it, "
                 "would allow it$");
  e.reports[0].ratio = 0;
  print_text();
  ck_assert_line("^counter fake-0: dropped: its rate is not stated here, and "
                 "it did not move 1000 ticks in a second to be measured; ");
}
END_TEST

/* A stated rate checked against the clock: both figures, and what the
 * probe did when they disagreed. */
START_TEST(stated_rate_check_has_both_figures)
{
  e.reports[0].info.kind = COUNTER_OFFCORE;
  e.reports[0].info.frequency = 62500000LL;
  e.reports[0].outcome = PROBE_WORKS;
  e.reports[0].precision = 141;
  e.reports[0].persecond = 2596100000LL;
  e.reports[0].rate.stated = 62500000LL;
  e.reports[0].rate.seen = 62499000.0;
  e.reports[0].rate.verdict = RATE_AGREES;
  e.reports[0].name = "fake-0";
  e.count = 1;
  e.nreports = 1;
  e.chosen = 0;
  print_text();
  ck_assert_line("^counter fake-0: chosen: precision 141 cycles, the best; its "
                 "stated rate, 62\\.5 MHz, agrees with the clock's 62\\.499 MHz "
                 "over the sampling$");
  /* firmware's 62.5 MHz for a 10 MHz timer */
  e.reports[0].info.frequency = 0;
  e.reports[0].info.rate_unknown = 1;
  e.reports[0].rate.seen = 10000300.0;
  e.reports[0].rate.verdict = RATE_DISAGREES;
  print_text();
  ck_assert_line("^counter fake-0: chosen: precision 141 cycles, the best; its "
                 "stated rate, 62\\.5 MHz, disagrees with the clock's 10\\.0003 "
                 "MHz over the sampling: the cycles per tick were measured "
                 "instead$");
  e.reports[0].outcome = PROBE_MISFIT;
  e.reports[0].ratio = 33.333333;
  e.chosen = -1;
  print_text();
  ck_assert_line("^counter fake-0: dropped: its stated rate is wrong, and the "
                 "33\\.333333 cycles per tick measured");
}
END_TEST

START_TEST(unsteady_counters)
{
  fakes[0].failure = FAKE_NEVER_MOVES;
  fakes[1].failure = FAKE_DECREASES;
  fakes[1].bad_attempts = SELECT_ATTEMPTS;
  explain_table(3, 0);
  ck_assert_line("^counter fake-0: dropped: never increased in 10 attempts of "
                 "1000 reads$");
  ck_assert_line("^counter fake-1: dropped: went backwards in 10 of 10 attempts "
                 "of 1000 reads");
}
END_TEST

START_TEST(names_and_default_zero)
{
  fakes[0].steps[0] = 1;
  fakes[1].steps[0] = 5;
  explain_table(2, "fake-1");
  ck_assert_line("^counter fake-1: chosen: precision 15 cycles \\(10 for its "
                 "place in the order\\), named by CPUCYCLES_COUNTER$");
  ck_assert_line("^counter fake-0: dropped: precision 1 cycles, but "
                 "CPUCYCLES_COUNTER names fake-1$");

  explain_table(2, "default-zero");
  ck_assert_line("^counter default-zero: chosen: named by CPUCYCLES_COUNTER$");

  fakes[0].failure = FAKE_SETUP_REFUSES;
  fakes[1].failure = FAKE_SETUP_REFUSES;
  explain_table(2, 0);
  ck_assert_line("^counter fake-0: dropped: setup refused$");
  ck_assert_line("^counter default-zero: chosen: no other counter works$");
}
END_TEST

/* CPUCYCLES_COUNTER: used, unknown, or refused, and why; first. */
START_TEST(override_says_what_became_of_it)
{
  fakes[0].steps[0] = 1;
  fakes[1].steps[0] = 5;
  explain_table(2, "fake-1");
  ck_assert_line("^override fake-1: used: CPUCYCLES_COUNTER names it and it works$");
  ck_assert(strncmp(printed, "override ", 9) == 0);

  explain_table(2, "default-zero");
  ck_assert_line("^override default-zero: used: CPUCYCLES_COUNTER names it$");

  explain_table(2, "nonsense");
  ck_assert_line("^override nonsense: ignored: no counter of that name is "
                 "built into this library \\(fake-0, fake-1, default-zero\\); "
                 "the probe chose fake-0 as without CPUCYCLES_COUNTER$");
  ck_assert_line("^counter fake-0: chosen: precision 1 cycles, the best$");
  ck_assert_no_line("named by");

  /* a name that could break the lines is shown escaped */
  explain_table(2, "a b\nc\\");
  ck_assert_line("^override a\\\\x20b\\\\x0ac\\\\x5c: ignored: ");

  explain_table(2, "");
  ck_assert_line("^override \"\": ignored: CPUCYCLES_COUNTER is empty; the "
                 "probe chose fake-0 as without it$");

  fakes[1].failure = FAKE_SETUP_REFUSES;
  explain_table(2, "fake-1");
  ck_assert_line("^override fake-1: refused: it does not work here \\(setup "
                 "refused\\); the probe chose fake-0 as without "
                 "CPUCYCLES_COUNTER$");
  ck_assert_line("^counter fake-1: dropped: setup refused$");
}
END_TEST

/* ---- the frequency sources ---- */

START_TEST(persecond_sources)
{
  put("/etc/cpucyclespersecond", "2400MHz\n");
  put("/sys/devices/system/cpu/cpu0/cpufreq/scaling_setspeed", "<unsupported>\n");
  put("/sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq", "999999999999\n");
  put("/proc/cpuinfo", "processor\t: 0\ncpu MHz\t\t: 2100.000\n\n");
  explain_table(1, 0);
  ck_assert_int_eq(e.persecond, 2100000000LL);
  ck_assert_line("^persecond 2100000000: from /proc/cpuinfo$");
  ck_assert_line("^persecond source /etc/cpucyclespersecond: rejected: "
                 "\"2400MHz\": not a number, read in Hz$");
  ck_assert_line("^persecond source /sys/devices/system/cpu/cpu0/cpufreq/"
                 "scaling_setspeed: rejected: \"<unsupported>\": not a number");
  ck_assert_line("^persecond source /sys/devices/system/cpu/cpu0/cpufreq/"
                 "scaling_max_freq: rejected: \"999999999999\": implausible "
                 "\\(1 MHz to 100 GHz\\), read in kHz$");
  /* absent ones are not said */
  ck_assert_no_line("clock_tick");

  /* a file that is there and cannot be read */
  put("/etc/cpucyclespersecond", "");
  ck_assert_int_eq(unlink(strcat(strcpy(printed, root), "/etc/cpucyclespersecond")), 0);
  ck_assert_int_eq(mkdir(printed, 0700), 0);
  explain_table(1, 0);
  ck_assert_line("^persecond source /etc/cpucyclespersecond: rejected: "
                 "unreadable: EISDIR$");
}
END_TEST

/* ---- warnings ---- */

START_TEST(warnings_where_a_benchmark_is_misled)
{
  put("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n");
  put("/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n");
  put("/sys/devices/system/cpu/cpu2/cpufreq/scaling_governor", "schedutil\n");
  put("/sys/devices/system/cpu/intel_pstate/no_turbo", "0\n");
  put("/sys/devices/system/cpu/cpufreq/boost", "1\n");
  put("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu tsc constant_tsc "
      "hypervisor\n\nprocessor\t: 1\nflags\t\t: nonstop_tsc\n");
  explain_table(1, 0);
  ck_assert_line("^warning governor: frequency scaling: cpufreq governor "
                 "powersave on cpu0 and 1 more CPU not at performance");
  ck_assert_line("^warning turbo: turbo enabled \\(/sys/devices/system/cpu/"
                 "intel_pstate/no_turbo = 0\\)");
  ck_assert_line("^warning boost: boost enabled \\(/sys/devices/system/cpu/"
                 "cpufreq/boost = 1\\)");
  ck_assert_line("^warning tsc_not_invariant: the TSC is not invariant "
                 "\\(nonstop_tsc missing");
  ck_assert_line("^warning hypervisor: running under a hypervisor");
}
END_TEST

START_TEST(warning_on_a_hybrid_cpu)
{
  /* the core PMUs as the perf counters' first event found them */
  fakes[1].failure = FAKE_SETUP_REFUSES;
  fakes[1].hook = opens_a_perf_event;
  put_alder_lake();
  explain_table(2, 0);
  ck_assert_line("^warning hybrid: a hybrid CPU with 2 core types, cpu_core "
                 "\\(CPUs 0-15\\) and cpu_atom \\(CPUs 16-23\\): the same "
                 "code takes different numbers of cycles on each; pin a "
                 "benchmark to one \\(taskset -c 0-15\\)$");
  ck_assert_int_eq(e.core_pmus, 2);

  /* one core type (an Arm server): no warning */
  rmdir_tree("/sys");
  put("/sys/bus/event_source/devices/armv8_pmuv3_0/type", "8\n");
  put("/sys/bus/event_source/devices/armv8_pmuv3_0/cpus", "0-63\n");
  explain_table(2, 0);
  ck_assert_no_line("^warning hybrid");
  ck_assert_int_eq(e.core_pmus, 1);
}
END_TEST

/* The core PMUs are the perf counters' look, never the tool's: where no
 * perf event opened (none tried here), the fixture's hybrid PMUs are not
 * read, and nothing is said of them. */
START_TEST(core_pmus_are_the_perf_counters_look)
{
  put_alder_lake();
  explain_table(1, 0);
  ck_assert_no_line("^warning hybrid");
  ck_assert_int_eq(e.core_pmus, 0);
}
END_TEST

START_TEST(no_warning_on_a_benchmarking_machine)
{
  put("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
  put("/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "userspace\n");
  put("/sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");
  put("/sys/devices/system/cpu/cpufreq/boost", "0\n");
  put("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu constant_tsc_x "
      "nonstop_tsc constant_tsc\n\n");
  explain_table(1, 0);
  ck_assert_int_eq(e.nwarnings, 0);
  ck_assert_no_line("^warning");

  /* a flag is a whole word: constant_tsc_x is not constant_tsc */
  put("/proc/cpuinfo", "processor\t: 0\nflags\t\t: constant_tsc_x nonstop_tsc "
      "xhypervisor\n\n");
  explain_table(1, 0);
  ck_assert_int_eq(e.nwarnings, 1);
  ck_assert_line("^warning tsc_not_invariant: the TSC is not invariant "
                 "\\(constant_tsc missing");
}
END_TEST

/* ---- JSON ---- */

static const char *json_of(const char *s, size_t len)
{
  FILE *f = tmpfile();
  size_t n;
  ck_assert_ptr_nonnull(f);
  explain_json_string(f, s, len);
  rewind(f);
  n = fread(printed, 1, sizeof printed - 1, f);
  printed[n] = 0;
  fclose(f);
  return printed;
}

START_TEST(json_strings_are_escaped)
{
  ck_assert_str_eq(json_of("a\"b\\c", 5), "\"a\\\"b\\\\c\"");
  ck_assert_str_eq(json_of("\n\r\t\x01\x1f\x7f", 6),
                   "\"\\n\\r\\t\\u0001\\u001f\\u007f\"");
  ck_assert_str_eq(json_of("x\0y", 3), "\"x\\u0000y\"");
  ck_assert_str_eq(json_of("\xe9", 1), "\"\\u00e9\"");
  ck_assert_str_eq(json_of("/etc", 4), "\"/etc\"");
}
END_TEST

/* A refused source's text in the JSON: at most 64 bytes, and text_cut
 * true exactly when the text went on past them (/proc/cpuinfo values of 49
 * and 68 bytes were cut at 48 bytes, and a sysfs file's text at 64, with
 * text_cut false).  value is "2400.000x" and valuelen - 9 y's; returns the
 * JSON object of the source at path, in printed. */
static const char *source_json(const char *path, size_t valuelen)
{
  static const char head[] = "processor\t: 0\ncpu MHz\t\t: ";
  int cpuinfo = strcmp(path, "/proc/cpuinfo") == 0;
  size_t at0 = cpuinfo ? strlen(head) : 0;
  char text[256], *at, *end;

  ck_assert_uint_lt(valuelen, 200);
  strcpy(text, head);
  memset(text + at0, 'y', valuelen);
  memcpy(text + at0, "2400.000x", 9);
  strcpy(text + at0 + valuelen, cpuinfo ? "\n\n" : "\n");
  put("/etc/cpucyclespersecond", "0\n");
  put(path, text);
  explain_table(1, 0);
  print_json();
  snprintf(text, sizeof text, "\"%s\"", path);
  at = strstr(printed, text);
  ck_assert_msg(at != 0, "no %s source in:\n%s", path, printed);
  end = strchr(at, '}');
  ck_assert_ptr_nonnull(end);
  *end = 0;
  return at;
}

static void check_text_cut(const char *path, size_t valuelen, size_t shown,
                           int cut)
{
  const char *json = source_json(path, valuelen);
  char text[100], text_cut[40];
  snprintf(text, sizeof text, "\"text\": \"2400.000x%.*s", (int) (shown - 9),
           "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
  snprintf(text_cut, sizeof text_cut, "\"text_cut\": %s", cut ? "true" : "false");
  ck_assert_msg(strstr(json, text) != 0 && strstr(json, text)[strlen(text)] != 'y',
                "%s, %zu bytes: no %s\" in:\n%s", path, valuelen, text, json);
  ck_assert_msg(strstr(json, text_cut) != 0,
                "%s, %zu bytes: no %s in:\n%s", path, valuelen, text_cut, json);
}

START_TEST(json_text_cut_of_a_long_value)
{
  static const size_t lens[] = { 10, 47, 48, 49, 63, 64, 65, 68, 150 };
  static const char max_freq[] =
    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq";
  size_t k;
  for (k = 0; k < sizeof lens / sizeof lens[0]; k++)
    check_text_cut("/proc/cpuinfo", lens[k], lens[k] < 64 ? lens[k] : 64,
                   lens[k] > 64);
  /* a sysfs file: its newline is part of the text */
  rmdir_tree("/proc");
  check_text_cut(max_freq, 62, 62, 0);
  check_text_cut(max_freq, 63, 63, 0);   /* 64 bytes with the newline */
  check_text_cut(max_freq, 64, 64, 1);   /* the newline went on */
  check_text_cut(max_freq, 100, 64, 1);
}
END_TEST

static Suite *explain_suite(void)
{
  Suite *s = suite_create("explain");
  TCase *t = tcase_create("explain");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, every_counter_has_a_line_in_order);
  tcase_add_test(t, counter_not_built_has_its_line);
#ifndef _WIN32
  tcase_add_test(t, not_tried_says_why);
#endif
  tcase_add_test(t, misfit_of_a_measured_timer);
  tcase_add_test(t, stated_rate_check_has_both_figures);
  tcase_add_test(t, perf_refusal_says_paranoid_and_the_action);
  tcase_add_test(t, real_perf_counter_refused_by_the_kernel);
  tcase_add_test(t, rdpmc_refusals);
  tcase_add_test(t, settings_are_the_reports);
  tcase_add_test(t, crashes_say_the_signal_and_where);
  tcase_add_test(t, misfit_says_the_frequencies);
  tcase_add_test(t, unsteady_counters);
  tcase_add_test(t, a_tie_is_named_only_when_there_was_one);
  tcase_add_test(t, names_and_default_zero);
  tcase_add_test(t, override_says_what_became_of_it);
  tcase_add_test(t, persecond_sources);
  tcase_add_test(t, warnings_where_a_benchmark_is_misled);
  tcase_add_test(t, no_warning_on_a_benchmarking_machine);
  tcase_add_test(t, warning_on_a_hybrid_cpu);
  tcase_add_test(t, core_pmus_are_the_perf_counters_look);
  tcase_add_test(t, hybrid_refusals);
  tcase_add_test(t, json_strings_are_escaped);
  tcase_add_test(t, json_text_cut_of_a_long_value);
  suite_add_tcase(s, t);
  return s;
}

int main(void)
{
  return run_suite(explain_suite());
}
