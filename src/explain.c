/* cpucycles-info --explain and --json (explain.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "explain.h"
#include "multiplier.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perf.h"
#include "readfile.h"

/* ---- collecting ---- */

void explain_keep_source(const struct persecond_source *s, void *arg)
{
  struct explain *e = arg;
  struct explain_source *k;

  if (e->nsources >= EXPLAIN_SOURCES) return;
  k = &e->sources[e->nsources++];
  memset(k, 0, sizeof *k);
  k->source = s->source;
  k->verdict = s->verdict;
  if (s->text) {
    k->has_text = 1;
    k->len = s->len < EXPLAIN_TEXT ? s->len : EXPLAIN_TEXT;
    k->cut = s->len > EXPLAIN_TEXT;
    memcpy(k->text, s->text, k->len);
  }
  k->unit = s->unit;
  k->error = s->error;
  k->value = s->value;
}

void explain_keep_report(const struct probe_report *r, void *arg)
{
  struct explain *e = arg;
  if (e->nreports <= EXPLAIN_COUNTERS) e->reports[e->nreports++] = *r;
}

/* A small file under root holding one integer (and a newline). */
static struct explain_setting read_setting(const char *root, const char *path)
{
  struct explain_setting s = { 0, 0 };
  char buf[32], *end;
  int full;
  ssize_t len = cpucycles_read_file_start(root, path, buf, sizeof buf - 1,
                                          &full);
  if (len <= 0 || full) return s;
  buf[len] = 0;
  errno = 0;
  s.value = strtol(buf, &end, 10);
  if (end == buf || errno || (*end && strcmp(end, "\n") != 0)) return s;
  s.known = 1;
  return s;
}

/* The first line of a small file under root, without its newline, or ""
 * when there is none. */
static const char *read_word(const char *root, const char *path, char *buf,
                             size_t size)
{
  int full;
  ssize_t len = cpucycles_read_file_start(root, path, buf, size - 1, &full);
  if (len < 0) len = 0;
  buf[len] = 0;
  buf[strcspn(buf, "\n")] = 0;
  return buf;
}

/* Formats onto the end of buf's string, cutting what does not fit. */
static void append(char *buf, size_t size, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...)
{
  size_t used = strlen(buf);
  va_list ap;
  if (used + 1 >= size) return;
  va_start(ap, fmt);
  vsnprintf(buf + used, size - used, fmt, ap);
  va_end(ap);
}

static void warn(struct explain *e, const char *key, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
static void warn(struct explain *e, const char *key, const char *fmt, ...)
{
  va_list ap;
  if (e->nwarnings >= EXPLAIN_WARNINGS) return;
  e->warnings[e->nwarnings].key = key;
  va_start(ap, fmt);
  vsnprintf(e->warnings[e->nwarnings].text,
            sizeof e->warnings[e->nwarnings].text, fmt, ap);
  va_end(ap);
  e->nwarnings++;
}

#define SYSCPU "/sys/devices/system/cpu"
#define PMUDIR "/sys/bus/event_source/devices"

/* Governors other than performance and userspace (which pins a set
 * frequency) move the clock with the load. */
static void warn_governors(struct explain *e)
{
  char path[96], governor[64], first[64] = "";
  int cpu, firstcpu = -1, others = 0;
  struct stat st;

  for (cpu = 0; cpu < 65536; cpu++) {
    char full[4096];
    snprintf(path, sizeof path, SYSCPU "/cpu%d", cpu);
    snprintf(full, sizeof full, "%s%s", e->root, path);
    if (stat(full, &st) != 0) break;
    snprintf(path, sizeof path, SYSCPU "/cpu%d/cpufreq/scaling_governor", cpu);
    read_word(e->root, path, governor, sizeof governor);
    if (!*governor || strcmp(governor, "performance") == 0
        || strcmp(governor, "userspace") == 0)
      continue;
    if (firstcpu < 0) {
      firstcpu = cpu;
      snprintf(first, sizeof first, "%s", governor);
    } else {
      others++;
    }
  }
  if (firstcpu < 0) return;
  if (others)
    warn(e, "governor",
         "frequency scaling: cpufreq governor %s on cpu%d and %d more CPU%s "
         "not at performance: the clock rate follows the load; cpupower "
         "frequency-set -g performance pins it", first, firstcpu, others,
         others > 1 ? "s" : "");
  else
    warn(e, "governor",
         "frequency scaling: cpufreq governor %s on cpu%d: the clock rate "
         "follows the load; cpupower frequency-set -g performance pins it",
         first, firstcpu);
}

static void warn_turbo(struct explain *e)
{
  char word[32];
  if (strcmp(read_word(e->root, SYSCPU "/intel_pstate/no_turbo", word,
                       sizeof word), "0") == 0)
    warn(e, "turbo",
         "turbo enabled (" SYSCPU "/intel_pstate/no_turbo = 0): the clock "
         "rate depends on load and temperature; writing 1 there disables it");
  if (strcmp(read_word(e->root, SYSCPU "/cpufreq/boost", word, sizeof word),
             "1") == 0)
    warn(e, "boost",
         "boost enabled (" SYSCPU "/cpufreq/boost = 1): the clock rate "
         "depends on load and temperature; writing 0 there disables it");
}

/* A hybrid CPU: the core types differ in cycles per function, not only
 * in frequency. */
static void warn_hybrid(struct explain *e)
{
  /* A PMU's name fills at most its array (pmu.h): the path always fits. */
  char path[sizeof PMUDIR + sizeof e->pmus[0].name + sizeof "/cpus"];
  char list[224] = "", cpus[3][48];
  int i, n = e->core_pmus < CPUCYCLES_PMU_MAX ? e->core_pmus : CPUCYCLES_PMU_MAX;

  if (e->core_pmus < 2) return;
  for (i = 0; i < n && i < 3; i++) {
    snprintf(path, sizeof path, PMUDIR "/%.*s/cpus",
             (int) sizeof e->pmus[i].name - 1, e->pmus[i].name);
    read_word(e->root, path, cpus[i], sizeof cpus[i]);
    append(list, sizeof list, "%s%s (CPUs %s)",
           i == 0 ? "" : i == n - 1 ? " and " : ", ", e->pmus[i].name, cpus[i]);
  }
  if (n > 3) append(list, sizeof list, ", ...");
  warn(e, "hybrid",
       "a hybrid CPU with %d core types, %s: the same code takes different "
       "numbers of cycles on each; pin a benchmark to one (taskset -c %s)",
       e->core_pmus, list, cpus[0]);
}

#ifdef _WIN32
/* No /proc/cpuinfo on Windows (and no getline in its C runtime). */
static void warn_cpuinfo_flags(struct explain *e)
{
  (void) e;
}
#else
static int has_flag(const char *flags, const char *flag)
{
  size_t n = strlen(flag);
  const char *p = flags;
  while ((p = strstr(p, flag)) != 0) {
    if ((p == flags || p[-1] == ' ' || p[-1] == '\t')
        && (p[n] == 0 || p[n] == ' ' || p[n] == '\t' || p[n] == '\n'))
      return 1;
    p += n;
  }
  return 0;
}

/* The first "flags" line of /proc/cpuinfo (x86's list of CPUID features;
 * other ISAs have none, and get neither warning). */
static void warn_cpuinfo_flags(struct explain *e)
{
  char path[4096];
  char *line = 0;
  size_t size = 0;
  FILE *f;

  snprintf(path, sizeof path, "%s/proc/cpuinfo", e->root);
  f = fopen(path, "re");
  if (!f) return;
  while (getline(&line, &size, f) > 0) {
    size_t keylen = strcspn(line, ":");
    const char *flags;
    if (!line[keylen]) {
      if (line[0] == '\n') break;   /* the first processor's block ends */
      continue;
    }
    while (keylen > 0 && (line[keylen - 1] == ' ' || line[keylen - 1] == '\t'))
      keylen--;
    if (keylen != 5 || memcmp(line, "flags", 5) != 0) continue;
    flags = strchr(line, ':') + 1;
    if (!has_flag(flags, "constant_tsc") || !has_flag(flags, "nonstop_tsc"))
      warn(e, "tsc_not_invariant",
           "the TSC is not invariant (%s missing from the /proc/cpuinfo "
           "flags): it may change rate with the clock or stop in sleep "
           "states, and the TSC counters then do not count at persecond",
           !has_flag(flags, "constant_tsc")
           ? (!has_flag(flags, "nonstop_tsc") ? "constant_tsc and nonstop_tsc"
                                              : "constant_tsc")
           : "nonstop_tsc");
    if (has_flag(flags, "hypervisor"))
      warn(e, "hypervisor",
           "running under a hypervisor (the hypervisor flag in /proc/cpuinfo): "
           "other guests share the CPU and the counters may be emulated or "
           "offset; benchmark on bare metal");
    break;
  }
  free(line);
  fclose(f);
}
#endif

void explain_start(struct explain *e, const char *root, int count,
                   const char *name)
{
  memset(e, 0, sizeof *e);
  e->root = root ? root : "";
  e->named = name;
  e->count = count;
}

/* The switch named name as the probe's reports say a setup read it
 * (counter_info.setting); unknown where no counter read it (not tried, not
 * built, another counter named): the tool does not read it itself. */
static struct explain_setting reported_setting(const struct explain *e,
                                               const char *name)
{
  struct explain_setting s = { 0, 0 };
  int i;
  for (i = 0; i < e->nreports; i++) {
    const struct counter_setting *c = &e->reports[i].info.setting;
    if (c->name && strcmp(c->name, name) == 0 && c->known) {
      s.known = 1;
      s.value = c->value;
      break;
    }
  }
  return s;
}

void explain_machine(struct explain *e)
{
  /* The library never reads kernel.perf_event_paranoid (the kernel's
   * answer to perf_event_open is its question): the tool reads it, only
   * to explain an EACCES or EPERM refusal in words. */
  e->paranoid = read_setting(e->root, "/proc/sys/kernel/perf_event_paranoid");
  e->rdpmc = reported_setting(e, CPUCYCLES_SETTING_RDPMC);
  e->perf_user_access = reported_setting(e, CPUCYCLES_SETTING_PERF_USER_ACCESS);
  /* The core PMUs as the perf counters found them (the process's first
   * perf event looks); none known where no event opened. */
#ifdef CPUCYCLES_PERF_AVAILABLE
  e->core_pmus = cpucycles_perf_core_pmus(e->pmus, CPUCYCLES_PMU_MAX);
  if (e->core_pmus < 0) e->core_pmus = 0;
#endif
  warn_governors(e);
  warn_turbo(e);
  warn_cpuinfo_flags(e);
  warn_hybrid(e);
}

int explain_collect(struct explain *e, const char *root,
                    const struct counter *const *table, int count,
                    const char *envpersecond, const char *name)
{
  struct choice choice;

  explain_start(e, root, count, name);
  if (count > EXPLAIN_COUNTERS) return -1;
  e->persecond = cpucycles_persecond_estimate_reported(e->root, envpersecond,
                                                       explain_keep_source, e);
#ifdef CPUCYCLES_PERF_AVAILABLE
  cpucycles_perf_set_persecond(e->persecond);
#endif
  e->chosen = cpucycles_select(table, count, e->persecond, name,
                               explain_keep_report, e, &choice);
  if (e->chosen >= 0 && table[e->chosen]->release) table[e->chosen]->release();
  explain_machine(e);
  return 0;
}

/* ---- words ---- */

static const char *errno_name(int err)
{
  switch (err) {
  case EACCES: return "EACCES";
  case EPERM: return "EPERM";
  case ENOENT: return "ENOENT";
  case ENODEV: return "ENODEV";
  case EOPNOTSUPP: return "EOPNOTSUPP";
  case EINVAL: return "EINVAL";
  case EBUSY: return "EBUSY";
  case EMFILE: return "EMFILE";
  case ENFILE: return "ENFILE";
  case ENOMEM: return "ENOMEM";
  case ENOSYS: return "ENOSYS";
  case EISDIR: return "EISDIR";
  case ENXIO: return "ENXIO";
  case E2BIG: return "E2BIG";
  case EIO: return "EIO";
  }
  return 0;
}

static const char *signal_name(int sig)
{
  switch (sig) {
  case SIGILL: return "SIGILL";
  case SIGFPE: return "SIGFPE";
#ifdef SIGBUS /* not on Windows */
  case SIGBUS: return "SIGBUS";
#endif
  case SIGSEGV: return "SIGSEGV";
  case SIGABRT: return "SIGABRT";
  }
  return 0;
}

static const char *kind_name(enum counter_kind kind)
{
  switch (kind) {
  case COUNTER_ONCORE: return "oncore";
  case COUNTER_OFFCORE: return "offcore";
  case COUNTER_PERFEVENT: return "perfevent";
  case COUNTER_OSCLOCK: return "osclock";
  }
  return "unknown";
}

static const char *catch_name(enum catch_problem p)
{
  switch (p) {
  case CATCH_READY: return "ready";
  case CATCH_PENDING: return "crash_signal_pending";
  case CATCH_PENDING_UNKNOWN: return "rt_sigpending_refused";
  case CATCH_MASK_REFUSED: return "pthread_sigmask_refused";
  case CATCH_ACTION_REFUSED: return "sigaction_refused";
  case CATCH_REPLACED: return "handler_replaced";
  }
  return "unknown";
}

static const char *outcome_name(enum probe_outcome o)
{
  switch (o) {
  case PROBE_WORKS: return "works";
  case PROBE_REFUSED: return "refused";
  case PROBE_CRASHED: return "crashed";
  case PROBE_MISFIT: return "misfit";
  case PROBE_BACKWARDS: return "backwards";
  case PROBE_STUCK: return "stuck";
  case PROBE_FALLBACK: return "fallback";
  case PROBE_NOT_BUILT: return "not_built";
  case PROBE_NOT_TRIED: return "not_tried";
  }
  return "unknown";
}

static const char *verdict_name(enum persecond_verdict v)
{
  switch (v) {
  case PERSECOND_ABSENT: return "absent";
  case PERSECOND_UNREADABLE: return "unreadable";
  case PERSECOND_NO_VALUE: return "no_value";
  case PERSECOND_NOT_A_NUMBER: return "not_a_number";
  case PERSECOND_IMPLAUSIBLE: return "implausible";
  case PERSECOND_ACCEPTED: return "accepted";
  }
  return "unknown";
}

static void append_errno(char *buf, size_t size, int err)
{
  const char *n = errno_name(err);
  if (n) append(buf, size, "%s", n);
  else append(buf, size, "errno %d", err);
}

static int starts_with(const char *s, const char *prefix)
{
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A frequency in MHz as a person writes it: 1050 MHz, 19.2 MHz. */
static void append_mhz(char *buf, size_t size, long long hz)
{
  append(buf, size, "%.10g MHz", (double) hz / 1e6);
}

static const char *persecond_source(const struct explain *e)
{
  int i;
  for (i = 0; i < e->nsources; i++)
    if (e->sources[i].verdict == PERSECOND_ACCEPTED) return e->sources[i].source;
  return "default";
}

static void refused(const struct explain *e, const struct probe_report *r,
                    char *fact, size_t fs, char *action, size_t as)
{
  const char *why = r->info.refusal;
  int user_access_isa = starts_with(r->name, "arm64-")
                        || starts_with(r->name, "riscv");

  if (!why) {
    append(fact, fs, "setup refused");
  } else if (strcmp(why, CPUCYCLES_REFUSAL_PERF_OPEN) == 0) {
    int err = r->info.refusal_errno;
    append(fact, fs, "perf_event_open: ");
    append_errno(fact, fs, err);
    if ((err == EACCES || err == EPERM) && e->paranoid.known) {
      append(fact, fs, " (kernel.perf_event_paranoid = %ld)", e->paranoid.value);
      if (e->paranoid.value > 2)
        append(action, as, "cpucycles-open or sysctl "
               "kernel.perf_event_paranoid=2 would allow it");
      else
        append(action, as, "the setting allows it: a seccomp filter or a "
               "container's policy forbids perf_event_open here");
    } else if (err == EACCES || err == EPERM) {
      append(action, as, "cpucycles-open or sysctl "
             "kernel.perf_event_paranoid=2 would allow it");
    } else if (err == ENOENT || err == ENODEV || err == EOPNOTSUPP) {
      append(fact, fs, " (the kernel has no hardware cycles event here)");
      append(action, as, "a virtual machine needs a virtual PMU; nothing "
             "in this system's settings would allow it");
    } else if (err == ENOSYS) {
      append(fact, fs, " (a kernel without perf events)");
    }
  } else if (strcmp(why, CPUCYCLES_REFUSAL_NO_USER_RDPMC) == 0) {
    append(fact, fs, "%s", why);
    if (user_access_isa) {
      if (e->perf_user_access.known)
        append(fact, fs, " (kernel.perf_user_access = %ld)",
               e->perf_user_access.value);
      append(action, as, "cpucycles-open or sysctl kernel.perf_user_access=1 "
             "would allow it");
    } else {
      if (e->rdpmc.known) append(fact, fs, " (rdpmc = %ld)", e->rdpmc.value);
      append(action, as, "cpucycles-open (rdpmc = 2) would allow it");
    }
  } else if (strcmp(why, CPUCYCLES_REFUSAL_RDPMC_SWITCH) == 0) {
    if (e->rdpmc.known && e->rdpmc.value == 0)
      append(fact, fs, "RDPMC not allowed (rdpmc = 0)");
    else
      append(fact, fs, "RDPMC not allowed: rdpmc switch 1 and no perf event "
             "(rdpmc = 1 allows it only with one)");
    append(action, as, "cpucycles-open (rdpmc = 2) would allow it");
  } else if (strcmp(why, CPUCYCLES_REFUSAL_NO_PMU) == 0) {
    append(fact, fs, "RDPMC not allowed: %s", why);
    append(action, as, "a machine (or a virtual machine) with a PMU "
           "exposed to Linux");
  } else if (strcmp(why, CPUCYCLES_REFUSAL_NO_FIXED_COUNTER) == 0) {
    append(fact, fs, "%s: this CPU has no fixed cycles counter (AMD's have "
           "none)", why);
  } else if (strcmp(why, CPUCYCLES_REFUSAL_NOT_FIXED) == 0) {
    append(fact, fs, "%s (an AMD CPU has none; on Intel the NMI watchdog "
           "may hold it)", why);
    append(action, as, "cpucycles-open (kernel.nmi_watchdog = 0) frees it "
           "where the watchdog holds it");
#ifdef CPUCYCLES_PERF_AVAILABLE
  } else if (strcmp(why, CPUCYCLES_PERF_REFUSAL_HYBRID) == 0) {
    append(fact, fs, "%s", why);
    append(action, as, "amd64-perfpmc sums the core types' events");
  } else if (strcmp(why, CPUCYCLES_PERF_REFUSAL_PMUS) == 0) {
    append(fact, fs, "%s (%d core PMUs, at most %d)", why, e->core_pmus,
           CPUCYCLES_PMU_MAX);
#endif
  } else {
    append(fact, fs, "%s", why);
    if (r->info.refusal_errno) {
      append(fact, fs, ": ");
      append_errno(fact, fs, r->info.refusal_errno);
    }
  }
}

/* Why a counter that may fault was not tried: its fault could not have
 * been caught (lib/works.c). */
static void not_tried(const struct probe_report *r, char *fact, size_t fs,
                      char *action, size_t as)
{
  const char *sig = signal_name(r->catch.signal);
  append(fact, fs, "not tried: ");
  switch (r->catch.problem) {
  case CATCH_PENDING:
    if (sig) append(fact, fs, "%s", sig);
    else append(fact, fs, "crash signal %d", r->catch.signal);
    append(fact, fs, " (signal %d) blocked and pending in this thread", r->catch.signal);
    append(action, as, "a first call from a thread without that pending "
           "signal would try it");
    break;
  case CATCH_PENDING_UNKNOWN:
    append(fact, fs, "a crash signal is blocked here and rt_sigpending was "
           "refused, so a pending one could not be ruled out");
    break;
  case CATCH_MASK_REFUSED:
    append(fact, fs, "the signal mask could not be read or changed "
           "(pthread_sigmask refused)");
    break;
  case CATCH_ACTION_REFUSED:
    append(fact, fs, "sigaction was refused, so no crash signal could be "
           "caught");
    break;
  case CATCH_REPLACED:
    if (sig) append(fact, fs, "the program replaced the library's %s handler "
                    "during the probe", sig);
    else append(fact, fs, "the program replaced the library's handler of "
                "signal %d during the probe", r->catch.signal);
    break;
  case CATCH_READY:
    break;
  }
  append(fact, fs, ", and this counter could fault");
  if (r->stage == PROBE_IN_READS)
    append(fact, fs, " (setup found nothing to ask the kernel)");
}

static void crashed(const struct explain *e, const struct probe_report *r,
                    char *fact, size_t fs, char *action, size_t as)
{
  const char *sig = signal_name(r->signal);
  if (sig) append(fact, fs, "crashed with %s", sig);
  else append(fact, fs, "crashed with signal %d", r->signal);
  append(fact, fs, r->stage == PROBE_IN_SETUP ? " in setup" : " in its reads");
  if (strcmp(r->name, "amd64-pmcff") == 0) {
    if (!e->rdpmc.known) {
      append(fact, fs, " (no rdpmc switch to ask: /sys/bus/event_source/"
             "devices is not there)");
    } else if (e->rdpmc.value == 2) {
      append(fact, fs, " (RDPMC is allowed, rdpmc = 2: this CPU has no "
             "fixed counter 1, as AMD's have none)");
    } else {
      append(fact, fs, " (RDPMC is off: rdpmc = %ld)", e->rdpmc.value);
      append(action, as, "cpucycles-open (rdpmc = 2) would allow it");
    }
  } else if (strcmp(r->name, "arm64-pmc") == 0) {
    append(fact, fs, " (the kernel does not let user space read PMCCNTR_EL0)");
    append(action, as, "arm64-perfpmc reads it through perf; a kernel module "
           "setting PMUSERENR_EL0 would allow this one");
  } else if (starts_with(r->name, "riscv") && strstr(r->name, "-rdcycle")) {
    append(fact, fs, " (Linux 6.6 and later refuse user rdcycle)");
    append(action, as, "the perfrdcycle counter with cpucycles-open or sysctl "
           "kernel.perf_user_access=1");
  }
}

/* A stated rate and what the clock said of it, with both figures. */
static void rate_checked(const struct probe_report *r, char *fact, size_t fs)
{
  if (r->rate.stated <= 0 || r->rate.verdict == RATE_NOT_CHECKED) return;
  append(fact, fs, "; its stated rate, ");
  append_mhz(fact, fs, r->rate.stated);
  append(fact, fs, ", %s the clock's %.6g MHz over the sampling",
         r->rate.verdict == RATE_AGREES ? "agrees with" : "disagrees with",
         r->rate.seen / 1e6);
  if (r->rate.verdict == RATE_DISAGREES)
    append(fact, fs, ": the cycles per tick were measured instead");
}

static void misfit(const struct explain *e, const struct probe_report *r,
                   char *fact, size_t fs, char *action, size_t as)
{
  if (r->info.rate_unknown && r->persecond > 0) {
    append(fact, fs, r->rate.verdict == RATE_DISAGREES
                     ? "its stated rate is wrong" : "its rate is not stated here");
    if (r->ratio > 0)
      append(fact, fs, ", and the %.6f cycles per tick measured (three "
             "estimates) come within 0.2 of no k/2^j, 2^j up to 1024", r->ratio);
    else
      append(fact, fs, ", and it did not move %d ticks in a second to be "
             "measured", MULTIPLIER_TICKS);
    append(action, as, "the timer's frequency, where firmware or the OS "
           "can state it, would allow it");
    return;
  }
  if (r->info.frequency <= 0 || r->persecond <= 0) {
    append(fact, fs, "no usable frequency (%lld Hz against %lld Hz)",
           r->info.frequency, r->persecond);
    return;
  }
  append(fact, fs, "%lld Hz is not close to k/2^j times ", r->persecond);
  append_mhz(fact, fs, r->info.frequency);
  append(fact, fs, " (ratio %.6f: no 2^j up to 1024 brings it within 0.2 "
         "of an integer)", r->ratio);
  if (strcmp(persecond_source(e), "default") == 0)
    append(action, as, "no frequency source answered (%lld Hz is a guess): "
           "the CPU frequency in /etc/cpucyclespersecond would allow it",
           r->persecond);
  else
    append(action, as, "the frequency estimate from %s may be wrong: the "
           "CPU frequency in /etc/cpucyclespersecond would allow it",
           persecond_source(e));
}

/* The first other working counter whose precision equals counter i's, or
 * -1: the probe chose i over it by the order alone. */
static int tied_with(const struct explain *e, int i)
{
  int j;
  for (j = 0; j < e->count && j < e->nreports; j++)
    if (j != i && e->reports[j].outcome == PROBE_WORKS
        && e->reports[j].precision == e->reports[i].precision)
      return j;
  return -1;
}

/* The report of the counter CPUCYCLES_COUNTER names (default-zero's
 * included), or -1 when it names none of them. */
static int named_report(const struct explain *e)
{
  int i;
  if (!e->named) return -1;
  for (i = 0; i < e->nreports; i++)
    if (strcmp(e->reports[i].name, e->named) == 0) return i;
  return -1;
}

enum explain_named explain_named_outcome(const struct explain *e)
{
  int i = named_report(e);
  if (!e->named) return EXPLAIN_NAMED_NONE;
  if (i < 0) return EXPLAIN_NAMED_UNKNOWN;
  if (i == e->count ? e->chosen < 0 : i == e->chosen) return EXPLAIN_NAMED_USED;
  return EXPLAIN_NAMED_REFUSED;
}

int explain_counter(const struct explain *e, int i, char *fact,
                    size_t factsize, char *action, size_t actionsize)
{
  const struct probe_report *r = &e->reports[i];
  int chosen = i == e->count ? e->chosen < 0 : i == e->chosen;
  const char *winner = e->chosen >= 0 ? e->reports[e->chosen].name
                                      : "default-zero";
  int named = e->named && strcmp(e->named, winner) == 0;

  fact[0] = action[0] = 0;
  switch (r->outcome) {
  case PROBE_WORKS:
    append(fact, factsize, "precision %lld cycles", r->precision);
    if (r->bump > 0)
      append(fact, factsize, " (%lld for its place in the order)", r->bump);
    if (chosen && named) {
      append(fact, factsize, ", named by CPUCYCLES_COUNTER");
    } else if (chosen) {
      int tie = tied_with(e, i);
      append(fact, factsize, ", the best");
      if (tie >= 0)
        append(fact, factsize, " (%s ties at %lld: the earlier in the order "
               "wins)", e->reports[tie].name, r->precision);
    } else if (named)
      append(fact, factsize, ", but CPUCYCLES_COUNTER names %s", winner);
    else if (e->chosen >= 0)
      append(fact, factsize, ", not better than %s's %lld", winner,
             e->reports[e->chosen].precision);
    break;
  case PROBE_REFUSED:
    refused(e, r, fact, factsize, action, actionsize);
    break;
  case PROBE_CRASHED:
    crashed(e, r, fact, factsize, action, actionsize);
    break;
  case PROBE_MISFIT:
    misfit(e, r, fact, factsize, action, actionsize);
    break;
  case PROBE_BACKWARDS:
    append(fact, factsize, "went backwards in %d of %d attempts of %d reads "
           "(and never increased steadily in the others)",
           r->backwards, r->attempts, SELECT_SAMPLES);
    append(action, actionsize, "pinning the program to one CPU (taskset) "
           "may help if the CPUs' counters are not synchronised");
    break;
  case PROBE_STUCK:
    append(fact, factsize, "never increased in %d attempts of %d reads",
           r->attempts, SELECT_SAMPLES);
    if (strcmp(r->name, "amd64-pmcff") == 0)
      append(action, actionsize, "nobody programmed fixed counter 1: a "
             "running perf session or the NMI watchdog counts there");
    break;
  case PROBE_NOT_BUILT:
    append(fact, factsize, "not built into this library (it does not "
           "compile for this system, or configure left it out)");
    break;
  case PROBE_NOT_TRIED:
    not_tried(r, fact, factsize, action, actionsize);
    break;
  case PROBE_FALLBACK:
    if (chosen && named)
      append(fact, factsize, "named by CPUCYCLES_COUNTER");
    else if (chosen)
      append(fact, factsize, "no other counter works");
    else
      append(fact, factsize, "not needed: %s works", winner);
    break;
  }
  rate_checked(r, fact, factsize);
  return chosen;
}

/* ---- text ---- */

/* A source's text as a person reads it: quoted, at most 40 bytes, with
 * escapes for what does not print. */
static void print_quoted(FILE *out, const struct explain_source *s)
{
  size_t i, n = s->len < 40 ? s->len : 40;
  size_t shown = n;
  /* a trailing newline is the file's end, not part of the value */
  if (shown == s->len && shown > 0 && s->text[shown - 1] == '\n') shown--;
  fputc('"', out);
  for (i = 0; i < shown; i++) {
    unsigned char c = (unsigned char) s->text[i];
    if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
    else if (c == '\n') fputs("\\n", out);
    else if (c == '\t') fputs("\\t", out);
    else if (c < 0x20 || c >= 0x7f) fprintf(out, "\\x%02x", c);
    else fputc(c, out);
  }
  fputc('"', out);
  if (n < s->len || s->cut) fputs("...", out);
}

static void print_source_reason(FILE *out, const struct explain_source *s)
{
  switch (s->verdict) {
  case PERSECOND_UNREADABLE:
    fputs("unreadable: ", out);
    if (errno_name(s->error)) fputs(errno_name(s->error), out);
    else fprintf(out, "errno %d", s->error);
    break;
  case PERSECOND_NO_VALUE:
    fputs("no frequency line", out);
    break;
  case PERSECOND_NOT_A_NUMBER:
  case PERSECOND_IMPLAUSIBLE:
    if (s->has_text) {
      print_quoted(out, s);
      fputs(": ", out);
    }
    if (s->verdict == PERSECOND_NOT_A_NUMBER) fputs("not a number", out);
    else fputs("implausible (1 MHz to 100 GHz)", out);
    if (s->unit) fprintf(out, ", read in %s", s->unit);
    break;
  default:
    fputs(verdict_name(s->verdict), out);
    break;
  }
}

/* CPUCYCLES_COUNTER's value as one word that cannot break a line: bytes
 * other than letters, digits and ._+- as \xNN, at most 64 of them. */
static void print_name(FILE *out, const char *name)
{
  size_t i;
  if (!*name) {
    fputs("\"\"", out);
    return;
  }
  for (i = 0; i < 64 && name[i]; i++) {
    unsigned char c = (unsigned char) name[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+'
        || c == '-')
      fputc(c, out);
    else
      fprintf(out, "\\x%02x", c);
  }
  if (name[i]) fputs("...", out);
}

/* What became of CPUCYCLES_COUNTER, when it is set. */
static void print_named(FILE *out, const struct explain *e)
{
  const char *winner = e->chosen >= 0 ? e->reports[e->chosen].name
                                      : "default-zero";
  char fact[512], action[512];
  int i, listed;

  fputs("override ", out);
  print_name(out, e->named);
  switch (explain_named_outcome(e)) {
  case EXPLAIN_NAMED_NONE:
    break;
  case EXPLAIN_NAMED_USED:
    fputs(e->chosen < 0 ? ": used: CPUCYCLES_COUNTER names it\n"
                        : ": used: CPUCYCLES_COUNTER names it and it works\n", out);
    break;
  case EXPLAIN_NAMED_UNKNOWN:
    if (!*e->named) {
      fprintf(out, ": ignored: CPUCYCLES_COUNTER is empty; the probe chose %s "
              "as without it\n", winner);
      break;
    }
    fputs(": ignored: no counter of that name is built into this library (", out);
    for (i = 0, listed = 0; i < e->nreports; i++)
      if (e->reports[i].outcome != PROBE_NOT_BUILT)
        fprintf(out, "%s%s", listed++ ? ", " : "", e->reports[i].name);
    fprintf(out, "); the probe chose %s as without CPUCYCLES_COUNTER\n", winner);
    break;
  case EXPLAIN_NAMED_REFUSED:
    explain_counter(e, named_report(e), fact, sizeof fact, action, sizeof action);
    fprintf(out, ": refused: it does not work here (%s); the probe chose %s "
            "as without CPUCYCLES_COUNTER\n", fact, winner);
    break;
  }
}

void explain_print_text(FILE *out, const struct explain *e)
{
  char fact[512], action[512];
  int i;

  if (e->named) print_named(out, e);
  for (i = 0; i < e->nreports; i++) {
    int chosen = explain_counter(e, i, fact, sizeof fact, action, sizeof action);
    fprintf(out, "counter %s: %s: %s%s%s\n", e->reports[i].name,
            chosen ? "chosen" : "dropped", fact, *action ? "; " : "", action);
  }
  fprintf(out, "persecond %lld: from %s\n", e->persecond, persecond_source(e));
  for (i = 0; i < e->nsources; i++) {
    const struct explain_source *s = &e->sources[i];
    if (s->verdict == PERSECOND_ABSENT || s->verdict == PERSECOND_ACCEPTED)
      continue;
    fprintf(out, "persecond source %s: rejected: ", s->source);
    print_source_reason(out, s);
    fputc('\n', out);
  }
  for (i = 0; i < e->nwarnings; i++)
    fprintf(out, "warning %s: %s\n", e->warnings[i].key, e->warnings[i].text);
}

/* ---- JSON ---- */

void explain_json_string(FILE *out, const char *s, size_t len)
{
  size_t i;
  fputc('"', out);
  for (i = 0; i < len; i++) {
    unsigned char c = (unsigned char) s[i];
    switch (c) {
    case '"': fputs("\\\"", out); break;
    case '\\': fputs("\\\\", out); break;
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default:
      /* control characters, DEL and every byte past ASCII (a file's text
       * need not be UTF-8) as \u00XX: the byte's Latin-1 code point */
      if (c < 0x20 || c >= 0x7f) fprintf(out, "\\u%04x", c);
      else fputc(c, out);
    }
  }
  fputc('"', out);
}

static void json_cstring(FILE *out, const char *s)
{
  if (s) explain_json_string(out, s, strlen(s));
  else fputs("null", out);
}

static const char *named_outcome_name(enum explain_named n)
{
  switch (n) {
  case EXPLAIN_NAMED_NONE: return 0;
  case EXPLAIN_NAMED_USED: return "used";
  case EXPLAIN_NAMED_UNKNOWN: return "unknown";
  case EXPLAIN_NAMED_REFUSED: return "refused";
  }
  return 0;
}

static void json_key(FILE *out, const char *key, int *first)
{
  if (!*first) fputc(',', out);
  *first = 0;
  fputs("\n      ", out);
  json_cstring(out, key);
  fputs(": ", out);
}

static void json_setting(FILE *out, struct explain_setting s)
{
  if (s.known) fprintf(out, "%ld", s.value);
  else fputs("null", out);
}

/* An error's name ("errno N" where it has none), null for 0. */
static void json_errno(FILE *out, int err)
{
  if (!err) fputs("null", out);
  else if (errno_name(err)) json_cstring(out, errno_name(err));
  else fprintf(out, "\"errno %d\"", err);
}

static void json_counter(FILE *out, const struct explain *e, int i)
{
  const struct probe_report *r = &e->reports[i];
  char fact[512], action[512];
  int chosen = explain_counter(e, i, fact, sizeof fact, action, sizeof action);
  int first = 1;

  fputs("    {", out);
  json_key(out, "index", &first); fprintf(out, "%d", r->index);
  json_key(out, "name", &first); json_cstring(out, r->name);
  json_key(out, "chosen", &first); fputs(chosen ? "true" : "false", out);
  json_key(out, "outcome", &first); json_cstring(out, outcome_name(r->outcome));
  json_key(out, "fact", &first); json_cstring(out, fact);
  json_key(out, "action", &first);
  if (*action) json_cstring(out, action);
  else fputs("null", out);
  json_key(out, "precision", &first);
  if (r->outcome == PROBE_WORKS) fprintf(out, "%lld", r->precision);
  else fputs("null", out);
  json_key(out, "bump", &first);
  if (r->outcome == PROBE_WORKS) fprintf(out, "%lld", r->bump);
  else fputs("null", out);
  /* what setup said, when it got that far */
  json_key(out, "kind", &first);
  if (r->outcome == PROBE_WORKS || r->outcome == PROBE_MISFIT
      || r->outcome == PROBE_BACKWARDS || r->outcome == PROBE_STUCK
      || (r->outcome == PROBE_CRASHED && r->stage == PROBE_IN_READS))
    json_cstring(out, kind_name(r->info.kind));
  else
    fputs("null", out);
  json_key(out, "frequency", &first); fprintf(out, "%lld", r->info.frequency);
  json_key(out, "rate_unknown", &first);
  fputs(r->info.rate_unknown ? "true" : "false", out);
  json_key(out, "stated_rate", &first); fprintf(out, "%lld", r->rate.stated);
  json_key(out, "rate_seen", &first); fprintf(out, "%.9g", r->rate.seen);
  json_key(out, "rate_check", &first);
  json_cstring(out, r->rate.verdict == RATE_AGREES ? "agrees"
                    : r->rate.verdict == RATE_DISAGREES ? "disagrees" : 0);
  json_key(out, "ratio", &first); fprintf(out, "%.9g", r->ratio);
  json_key(out, "scaling", &first); fprintf(out, "%.9g", r->scaling);
  json_key(out, "only32", &first); fputs(r->info.only32 ? "true" : "false", out);
  json_key(out, "signal", &first);
  if (r->signal && signal_name(r->signal)) json_cstring(out, signal_name(r->signal));
  else if (r->signal) fprintf(out, "\"%d\"", r->signal);
  else fputs("null", out);
  json_key(out, "stage", &first);
  if (r->outcome == PROBE_CRASHED)
    json_cstring(out, r->stage == PROBE_IN_SETUP ? "setup" : "reads");
  else
    fputs("null", out);
  json_key(out, "refusal", &first);
  json_cstring(out, r->outcome == PROBE_REFUSED ? r->info.refusal : 0);
  json_key(out, "errno", &first);
  json_errno(out, r->outcome == PROBE_REFUSED ? r->info.refusal_errno : 0);
  json_key(out, "not_tried", &first);
  if (r->outcome == PROBE_NOT_TRIED) json_cstring(out, catch_name(r->catch.problem));
  else fputs("null", out);
  json_key(out, "attempts", &first); fprintf(out, "%d", r->attempts);
  json_key(out, "backwards", &first); fprintf(out, "%d", r->backwards);
  fputs("\n    }", out);
}

static void json_source(FILE *out, const struct explain_source *s)
{
  int first = 1;
  fputs("    {", out);
  json_key(out, "source", &first); json_cstring(out, s->source);
  json_key(out, "verdict", &first); json_cstring(out, verdict_name(s->verdict));
  json_key(out, "text", &first);
  if (s->has_text) explain_json_string(out, s->text, s->len);
  else fputs("null", out);
  json_key(out, "text_cut", &first); fputs(s->cut ? "true" : "false", out);
  json_key(out, "unit", &first); json_cstring(out, s->unit);
  json_key(out, "errno", &first);
  json_errno(out, s->verdict == PERSECOND_UNREADABLE ? s->error : 0);
  json_key(out, "value", &first);
  if (s->verdict == PERSECOND_ACCEPTED) fprintf(out, "%lld", s->value);
  else fputs("null", out);
  fputs("\n    }", out);
}

void explain_print_json(FILE *out, const struct explain *e, const char *version)
{
  int i;

  /* Indented by two per level: the top-level keys, then the arrays'
   * objects, then their keys. */
  fputs("{\n  \"version\": ", out); json_cstring(out, version);
  fputs(",\n  \"implementation\": ", out);
  json_cstring(out, e->chosen >= 0 ? e->reports[e->chosen].name
                                   : "default-zero");
  fputs(",\n  \"named\": ", out); json_cstring(out, e->named);
  fputs(",\n  \"named_outcome\": ", out);
  json_cstring(out, named_outcome_name(explain_named_outcome(e)));
  fprintf(out, ",\n  \"persecond\": %lld", e->persecond);
  fputs(",\n  \"persecond_source\": ", out); json_cstring(out, persecond_source(e));
  fputs(",\n  \"persecond_sources\": [", out);
  for (i = 0; i < e->nsources; i++) {
    fputs(i ? ",\n" : "\n", out);
    json_source(out, &e->sources[i]);
  }
  fputs("\n  ],\n  \"counters\": [", out);
  for (i = 0; i < e->nreports; i++) {
    fputs(i ? ",\n" : "\n", out);
    json_counter(out, e, i);
  }
  fputs("\n  ],\n  \"kernel\": {", out);
  fputs("\n    \"perf_event_paranoid\": ", out); json_setting(out, e->paranoid);
  fputs(",\n    \"rdpmc\": ", out); json_setting(out, e->rdpmc);
  fputs(",\n    \"perf_user_access\": ", out);
  json_setting(out, e->perf_user_access);
  fputs("\n  },\n  \"warnings\": [", out);
  for (i = 0; i < e->nwarnings; i++) {
    fputs(i ? ",\n    {\"key\": " : "\n    {\"key\": ", out);
    json_cstring(out, e->warnings[i].key);
    fputs(", \"text\": ", out);
    json_cstring(out, e->warnings[i].text);
    fputc('}', out);
  }
  fputs("\n  ]\n}\n", out);
}
