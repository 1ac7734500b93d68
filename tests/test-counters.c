/* What the counters learn from the CPU and the kernel before they are
 * tried: the TSC's rate from CPUID (lib/tscfreq.c), fed the answers of
 * real and imaginary processors, and Linux's RDPMC switch (lib/rdpmc.c),
 * read from fake sysfs trees. */
#include <config.h>
#ifndef _WIN32
#include <ftw.h>
#endif
#include <check.h>
#include "check-run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifndef _WIN32
#include <sys/wait.h>
#endif
#include <unistd.h>
#if defined(__linux__) && (defined(__x86_64__) || defined(__i386__))
#include <sys/prctl.h>
#endif
#include "counter.h"
#include "rdpmc.h"
#include "tscfreq.h"
#include "checked-by.h"


/* ---- CPUID ---- */

struct leaf { unsigned int leaf, regs[4]; };
static struct leaf cpu[8];
static int leaves;

static void set_leaf(unsigned int leaf, unsigned int a, unsigned int b,
                     unsigned int c, unsigned int d)
{
  int i;
  for (i = 0; i < leaves; i++)
    if (cpu[i].leaf == leaf) break;
  if (i == leaves) leaves++;
  cpu[i].leaf = leaf;
  cpu[i].regs[0] = a;
  cpu[i].regs[1] = b;
  cpu[i].regs[2] = c;
  cpu[i].regs[3] = d;
}

/* A leaf the CPU does not have reads as zeros, as on real processors
 * (beyond the maximum leaf, Intel returns the highest basic leaf's data;
 * the code under test must not look there, which the zeros would expose). */
static void fake_cpuid(unsigned int leaf, unsigned int regs[4])
{
  int i;
  for (i = 0; i < leaves; i++)
    if (cpu[i].leaf == leaf) {
      memcpy(regs, cpu[i].regs, sizeof cpu[i].regs);
      return;
    }
  memset(regs, 0, 4 * sizeof regs[0]);
}

#define INTEL 0x756e6547u, 0x6c65746eu, 0x49656e69u  /* ebx, ecx, edx */
#define AMD 0x68747541u, 0x444d4163u, 0x69746e65u
#define INVARIANT (1u << 8)

/* An Intel processor: maximum leaf max_leaf, the invariant-TSC bit as
 * given, leaf 0x15 as given, signature for leaf 1. */
static void intel(unsigned int max_leaf, unsigned int invariant,
                  unsigned int den, unsigned int num, unsigned int crystal,
                  unsigned int signature)
{
  leaves = 0;
  set_leaf(0, max_leaf, INTEL);
  set_leaf(1, signature, 0, 0, 0);
  set_leaf(0x15, den, num, crystal, 0);
  set_leaf(0x80000000u, 0x80000008u, 0, 0, 0);
  set_leaf(0x80000007u, 0, 0, 0, invariant);
}

START_TEST(tsc_rate_from_leaf_15)
{
  /* Ice Lake client: crystal 38.4 MHz stated, ratio 78/2: 1.4976 GHz */
  intel(0x1b, INVARIANT, 2, 78, 38400000, 0x000706e5);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 1497600000LL);
  /* Alder Lake: 38.4 MHz x 188/2 = 3.6096 GHz */
  intel(0x20, INVARIANT, 2, 188, 38400000, 0x00090672);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 3609600000LL);
}
END_TEST

START_TEST(tsc_crystal_by_model_when_leaf_15_leaves_it_out)
{
  /* Skylake client (06_5EH): 24 MHz x 300/2 = 3.6 GHz */
  intel(0x16, INVARIANT, 2, 300, 0, 0x000506e3);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 3600000000LL);
  /* Kaby Lake (06_8EH) */
  intel(0x16, INVARIANT, 2, 176, 0, 0x000806e9);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 2112000000LL);
  /* Cascade Lake (06_55H): 25 MHz x 168/2 = 2.1 GHz */
  intel(0x16, INVARIANT, 2, 168, 0, 0x00050657);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 2100000000LL);
  /* Goldmont (06_5CH): 19.2 MHz x 104/1 = 1.9968 GHz */
  intel(0x16, INVARIANT, 1, 104, 0, 0x000506c9);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 1996800000LL);
  /* a model the manual does not list: no crystal, no rate */
  intel(0x16, INVARIANT, 2, 300, 0, 0x000306a9);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 0);
}
END_TEST

START_TEST(tsc_rate_needs_an_invariant_tsc)
{
  intel(0x1b, 0, 2, 78, 38400000, 0x000706e5);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 0);
  /* no leaf 0x80000007 at all */
  intel(0x1b, INVARIANT, 2, 78, 38400000, 0x000706e5);
  set_leaf(0x80000000u, 0x80000004u, 0, 0, 0);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 0);
}
END_TEST

START_TEST(tsc_rate_needs_leaf_15)
{
  /* Haswell: maximum leaf 0xd, so leaf 0x15 is not read even if the table
   * has something there */
  intel(0xd, INVARIANT, 2, 78, 38400000, 0x000306c3);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 0);
  /* leaf 0x15 present but zero ratio (hypervisors often leave it so) */
  intel(0x1b, INVARIANT, 0, 0, 38400000, 0x000706e5);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 0);
  intel(0x1b, INVARIANT, 0, 78, 38400000, 0x000706e5);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 0);
  intel(0x1b, INVARIANT, 2, 0, 38400000, 0x000706e5);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 0);
}
END_TEST

START_TEST(tsc_rate_of_amd_is_unknown)
{
  /* An EPYC: invariant TSC, maximum leaf above 0x15, leaf 0x15 zeros; a
   * Skylake-like signature must not pull a crystal from Intel's table. */
  leaves = 0;
  set_leaf(0, 0x10, AMD);
  set_leaf(1, 0x000506e3, 0, 0, 0);
  set_leaf(0x80000000u, 0x80000021u, 0, 0, 0);
  set_leaf(0x80000007u, 0, 0, 0, INVARIANT);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 0);
  set_leaf(0, 0x16, AMD);
  set_leaf(0x15, 2, 300, 0, 0);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 0);
}
END_TEST

START_TEST(tsc_rate_outside_plausible_range_is_ignored)
{
  /* 0xffffffff x 0xffffffff / 1 Hz: garbage, and no overflow either */
  intel(0x1b, INVARIANT, 1, 0xffffffffu, 0xffffffffu, 0x000706e5);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 0);
  /* 1 kHz */
  intel(0x1b, INVARIANT, 1000, 1, 1000000, 0x000706e5);
  ck_assert_int_eq(cpucycles_tsc_frequency_from(fake_cpuid), 0);
}
END_TEST

/* The real CPU: whatever it says is 0 or plausible, and the counters'
 * description follows it. */
START_TEST(tsc_info_of_this_cpu)
{
#ifdef CPUCYCLES_TSCFREQ_AVAILABLE
  struct counter_info info;
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(cpucycles_tsc_setup(&info), 0);
  ck_assert_int_eq(info.kind, COUNTER_OFFCORE);
  ck_assert_int_eq(info.only32, 0);
  ck_assert(info.frequency == 0 || (info.frequency >= 1000000 && info.frequency <= 100000000000LL));
  ck_assert_int_eq(info.frequency_exact, info.frequency > 0);
#endif
}
END_TEST

/* A process that disabled RDTSC for itself (prctl PR_SET_TSC): the TSC
 * counters' setup asks the kernel first (PR_GET_TSC) and refuses with the
 * reason, instead of faulting, every fault avoided being a window closed
 * for other threads' signals.  The setup is called bare here, outside the
 * probe's catcher: a fault would kill the child. */
START_TEST(tsc_setup_refuses_where_rdtsc_is_disabled)
{
#if defined(PR_SET_TSC) && defined(PR_TSC_SIGSEGV)
  int i, status, tried = 0;
#ifdef UNDER_SANITIZER
  return;  /* the sanitizers' runtimes read the vDSO clock themselves */
#endif
  for (i = 0; i < cpucycles_counter_count; i++) {
    const struct counter *c = cpucycles_counter_table[i];
    pid_t pid;
    if (!c->setup) continue;  /* listed, not built */
    if (strcmp(c->name, "amd64-tsc") && strcmp(c->name, "amd64-tscasm")
        && strcmp(c->name, "x86-tsc") && strcmp(c->name, "x86-tscasm"))
      continue;
    tried++;
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
      struct counter_info info;
      memset(&info, 0, sizeof info);
      alarm(20);
      if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0) _exit(77);
      if (c->setup(&info) != -1) _exit(1);
      if (!info.refusal || !strstr(info.refusal, "PR_SET_TSC")) _exit(2);
      _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) return;
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "%s: child status %#x (a signal: the setup faulted)", c->name, status);
  }
  ck_assert_int_gt(tried, 0);
#endif
}
END_TEST

/* ---- the RDPMC switch ---- */

/* Linux's sysfs switch, over fixture trees built with POSIX calls; the
 * counter that asks it does not exist on Windows. */
#ifndef _WIN32

static char root[64];

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
  (void) st; (void) type; (void) ftw;
  return remove(path);
}

static void remove_root(void)
{
  if (root[0]) nftw(root, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

static void make_root(void)
{
  strcpy(root, "/tmp/cpucycles-rdpmcXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(root));
}

static void put(const char *pmu, const char *content)
{
  char path[256];
  FILE *f;
  const char *parts[] = { "/sys", "/sys/bus", "/sys/bus/event_source",
                          "/sys/bus/event_source/devices" };
  size_t i;
  for (i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    snprintf(path, sizeof path, "%s%s", root, parts[i]);
    mkdir(path, 0755);
  }
  snprintf(path, sizeof path, "%s/sys/bus/event_source/devices/%s", root, pmu);
  mkdir(path, 0755);
  if (!content) return;
  snprintf(path, sizeof path, "%s/sys/bus/event_source/devices/%s/rdpmc", root, pmu);
  f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(content, f);
  fclose(f);
}

START_TEST(rdpmc_switch_absent)
{
  make_root();
  /* no sysfs at all: nothing to ask */
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, 0), -1);
  /* PMUs, but no core PMU: no PMU driver, RDPMC never allowed */
  put("software", 0);
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, 0), 0);
  put("cpu", 0);  /* a core PMU without the switch: before 3.4, never */
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, 0), 0);
}
END_TEST

START_TEST(rdpmc_switch_values)
{
  make_root();
  put("cpu", "2\n");
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, 0), 2);
  put("cpu", "2");
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, 0), 2);
  put("cpu", "1\n");  /* Linux's default: only beside a mapped event */
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, 0), 1);
  put("cpu", "0\n");
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, 0), 1);
  put("cpu", "22\n");
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, 0), 1);
  put("cpu", "2x\n");
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, 0), 1);
  put("cpu", "");
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, 0), 1);
}
END_TEST

START_TEST(rdpmc_switch_of_hybrid_processors)
{
  make_root();
  put("cpu_core", "2\n");
  put("cpu_atom", "2\n");
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, 0), 2);
  put("cpu_atom", "1\n");  /* the E-cores would fault */
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, 0), 1);
}
END_TEST

/* What the switch said, for amd64-pmcff's report (cpucycles-info shows
 * it): the value of the switch that decided. */
START_TEST(rdpmc_switch_says_what_it_read)
{
  struct counter_setting seen = { 0, 0, 0 };
  make_root();
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, &seen), -1);
  ck_assert_int_eq(seen.known, 0);
  put("cpu", "0\n");
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, &seen), 1);
  ck_assert_int_eq(seen.known, 1);
  ck_assert_int_eq(seen.value, 0);
  put("cpu", "2x\n");
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, &seen), 1);
  ck_assert_int_eq(seen.known, 0);
  put("cpu", "2\n");
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, &seen), 2);
  ck_assert_int_eq(seen.known, 1);
  ck_assert_int_eq(seen.value, 2);
  put("cpu_atom", "1\n");  /* the one that says no */
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, &seen), 1);
  ck_assert_int_eq(seen.value, 1);
}
END_TEST

START_TEST(rdpmc_switch_unreadable)
{
  char path[256];
  make_root();
  put("cpu", "2\n");
  snprintf(path, sizeof path, "%s/sys/bus/event_source/devices/cpu/rdpmc", root);
  unlink(path);
  ck_assert_int_eq(mkdir(path, 0755), 0);  /* a directory: open works, read fails */
  ck_assert_int_eq(cpucycles_rdpmc_switch_read(root, 0), 1);
}
END_TEST

#endif

int main(void)
{
  Suite *s = suite_create("counters");
  TCase *t = tcase_create("tscfreq");
#ifndef _WIN32
  TCase *r = tcase_create("rdpmc");
#endif
  tcase_add_test(t, tsc_rate_from_leaf_15);
  tcase_add_test(t, tsc_crystal_by_model_when_leaf_15_leaves_it_out);
  tcase_add_test(t, tsc_rate_needs_an_invariant_tsc);
  tcase_add_test(t, tsc_rate_needs_leaf_15);
  tcase_add_test(t, tsc_rate_of_amd_is_unknown);
  tcase_add_test(t, tsc_rate_outside_plausible_range_is_ignored);
  tcase_add_test(t, tsc_info_of_this_cpu);
  tcase_add_test(t, tsc_setup_refuses_where_rdtsc_is_disabled);
  suite_add_tcase(s, t);
#ifndef _WIN32
  tcase_add_checked_fixture(r, 0, remove_root);
  tcase_add_test(r, rdpmc_switch_absent);
  tcase_add_test(r, rdpmc_switch_values);
  tcase_add_test(r, rdpmc_switch_of_hybrid_processors);
  tcase_add_test(r, rdpmc_switch_says_what_it_read);
  tcase_add_test(r, rdpmc_switch_unreadable);
  suite_add_tcase(s, r);
#endif
  return run_suite(s);
}
