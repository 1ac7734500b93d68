/* cpucycles-open's logic: see open-counters.h and cpucycles-open(1).
 *
 * Each setting is one small file of /proc/sys or /sys holding a decimal
 * number.  For each: read it (absent means this kernel or CPU does not
 * have it: nothing to do); if it already allows what the counters need,
 * leave it; otherwise write the least permissive value that does, and
 * read it back.  A file that cannot be read, or does not hold a plain
 * number, is not written. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "open-counters.h"

/* A call that a signal interrupted (EINTR) is made again, this many times
 * at most: a seccomp filter may answer EINTR to every call, and the tool
 * must then report the failure, not hang. */
#define EINTR_TRIES 100

/* How a value is compared with the one the counters need. */
enum need {
  AT_MOST,  /* value <= wanted allows them */
  AT_LEAST, /* value >= wanted allows them */
  EXACTLY   /* only value == wanted does */
};

struct setting {
  const char *name; /* as sysctl(8) names it, or the PMU's directory and file */
  const char *path;
  long wanted;
  enum need need;
};

/* The least permissive values that let the library's counters work:
 *
 * - kernel.perf_event_paranoid 2: a process may open perf events on its
 *   own threads counting user space only (exclude_kernel), which is what
 *   the perf counters (lib/perf.c) open.  Lower values (1: kernel
 *   profiling, 0: CPU-wide events, -1: everything) are not needed; higher
 *   ones (Debian's 3, Ubuntu's 4) refuse every unprivileged perf event.
 * - kernel.nmi_watchdog 0: on Intel the hard-lockup watchdog's cycles
 *   event holds fixed counter 1, the one amd64-perfpmcff reads; while it
 *   does, the kernel puts the thread's event elsewhere and amd64-perfpmcff
 *   is refused (doc/perf-counters.md).
 * - rdpmc 2 (x86; cpu_core and cpu_atom on hybrid Intel): every process
 *   may execute RDPMC at any time, which amd64-pmcff needs: it reads fixed
 *   counter 1 with no perf event of its own (the perf counters need only
 *   the kernel's default 1, a process with a perf event mapped).  This is
 *   what libcpucycles' own cpucycles-open sets, and the widest of the
 *   settings: see doc/security.md.
 * - kernel.perf_user_access 1 (arm64 since Linux 5.17, riscv since 6.6):
 *   a process may read the counter of its own perf event directly.  On
 *   riscv the default is already 1, and 2 (legacy: rdcycle for everyone)
 *   is left as it is. */
static const struct setting settings[] = {
  {"kernel.perf_event_paranoid", "/proc/sys/kernel/perf_event_paranoid", 2, AT_MOST},
  {"kernel.nmi_watchdog", "/proc/sys/kernel/nmi_watchdog", 0, EXACTLY},
  {"kernel.perf_user_access", "/proc/sys/kernel/perf_user_access", 1, AT_LEAST},
  {"cpu/rdpmc", "/sys/bus/event_source/devices/cpu/rdpmc", 2, AT_LEAST},
  {"cpu_core/rdpmc", "/sys/bus/event_source/devices/cpu_core/rdpmc", 2, AT_LEAST},
  {"cpu_atom/rdpmc", "/sys/bus/event_source/devices/cpu_atom/rdpmc", 2, AT_LEAST},
};

#define SETTINGS (sizeof settings / sizeof settings[0])

/* The value files are a few bytes; anything longer is not one. */
#define VALUE_MAX 64

static int allows(const struct setting *s, long value)
{
  switch (s->need) {
  case AT_MOST: return value <= s->wanted;
  case AT_LEAST: return value >= s->wanted;
  case EXACTLY: return value == s->wanted;
  }
  return 0;
}

static const char *need_words(const struct setting *s)
{
  switch (s->need) {
  case AT_MOST: return "at most";
  case AT_LEAST: return "at least";
  case EXACTLY: return "exactly";
  }
  return "";
}

/* An optional minus sign, 1 to 18 decimal digits (no overflow), an
 * optional newline, nothing else. */
static int parse_value(const char *text, size_t len, long *value)
{
  size_t i = 0, digits = 0;
  int negative = 0;
  long v = 0;

  if (len > 0 && text[len - 1] == '\n') len--;
  if (i < len && text[i] == '-') {
    negative = 1;
    i++;
  }
  for (; i < len; i++, digits++) {
    if (text[i] < '0' || text[i] > '9' || digits == 18) return -1;
    v = v * 10 + (text[i] - '0');
  }
  if (digits == 0) return -1;
  *value = negative ? -v : v;
  return 0;
}

/* Reads the file into text (at most VALUE_MAX bytes, NUL-terminated).
 * Returns 0, or an errno value; EFBIG for a longer file.  The last path
 * component is not followed if it is a symbolic link, and a FIFO planted
 * there cannot block.  text and *len are set on every return, a failed
 * open's included (empty): an analyser that does not know that a failed
 * open() sets errno sees "return errno" return 0 with *len unset. */
static int read_file(const char *path, char *text, size_t *len)
{
  int fd = -1, e = 0, tries = 0;
  size_t n = 0;

  text[0] = 0;
  *len = 0;

  while (fd < 0 && tries++ < EINTR_TRIES) {
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0 && errno != EINTR) break;
  }
  if (fd < 0) return errno;
  tries = 0;
  for (;;) {
    ssize_t r = read(fd, text + n, VALUE_MAX + 1 - n);
    if (r < 0 && errno == EINTR && ++tries < EINTR_TRIES) continue;
    if (r < 0) {
      e = errno;
      break;
    }
    if (r == 0) break;
    n += (size_t) r;
    if (n > VALUE_MAX) {
      e = EFBIG;
      break;
    }
  }
  close(fd);
  text[n < VALUE_MAX ? n : VALUE_MAX] = 0;
  *len = n;
  return e;
}

int open_counters_write_file(const char *path, const char *text, size_t len)
{
  int fd = -1, e = 0, tries = 0;
  ssize_t w = -1;

  /* No O_CREAT: only a file that is there is written. */
  while (fd < 0 && tries++ < EINTR_TRIES) {
    fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0 && errno != EINTR) break;
  }
  if (fd < 0) return errno;
  /* One write: a sysctl or sysfs file takes its value in one piece. */
  for (tries = 0; tries < EINTR_TRIES; tries++) {
    w = write(fd, text, len);
    if (w >= 0 || errno != EINTR) break;
  }
  if (w < 0) e = errno;
  else if ((size_t) w != len) e = EIO;
  if (close(fd) != 0 && e == 0) e = errno;
  return e;
}

/* A failure, on err, after what out holds so far: where both go to one
 * file, the lines stay in the order they happened. */
#ifdef __GNUC__
__attribute__((format(printf, 3, 4)))
#endif
static void failure(FILE *out, FILE *err, const char *format, ...)
{
  va_list args;
  fflush(out);
  fputs("cpucycles-open: ", err);
  va_start(args, format);
  vfprintf(err, format, args);
  va_end(args);
}

/* The outcome of one setting. */
enum result { ABSENT, UNCHANGED, CHANGED, WOULD_CHANGE, FAILED };

static enum result apply(const struct open_config *config, const struct setting *s,
                         FILE *out, FILE *err)
{
  char path[4096], text[VALUE_MAX + 1], wanted[32];
  size_t len;
  long value, after;
  int e, wanted_len;
  open_writer *write_value = config->write ? config->write : open_counters_write_file;

  if ((size_t) snprintf(path, sizeof path, "%s%s", config->root, s->path) >= sizeof path) {
    failure(out, err, "%s: the path under the root is too long; left alone\n",
            s->name);
    return FAILED;
  }
  e = read_file(path, text, &len);
  if (e == ENOENT) {
    fprintf(out, "absent %s (%s): nothing to change\n", s->name, path);
    return ABSENT;
  }
  if (e != 0) {
    failure(out, err, "%s: cannot read %s: %s; left alone\n", s->name, path,
            e == EFBIG ? "longer than a value" : strerror(e));
    return FAILED;
  }
  if (parse_value(text, len, &value) != 0) {
    failure(out, err, "%s: %s does not hold a plain number; left alone\n",
            s->name, path);
    return FAILED;
  }
  if (allows(s, value)) {
    fprintf(out, "unchanged %s = %ld (%s %ld is enough)\n", s->name, value,
            need_words(s), s->wanted);
    return UNCHANGED;
  }
  if (config->dry_run) {
    fprintf(out, "would change %s from %ld to %ld (%s)\n", s->name, value, s->wanted, path);
    return WOULD_CHANGE;
  }
  wanted_len = snprintf(wanted, sizeof wanted, "%ld\n", s->wanted);
  e = write_value(path, wanted, (size_t) wanted_len);
  if (e != 0) {
    failure(out, err, "%s: cannot write %ld to %s: %s\n", s->name, s->wanted,
            path, strerror(e));
    return FAILED;
  }
  e = read_file(path, text, &len);
  if (e != 0 || parse_value(text, len, &after) != 0) {
    failure(out, err, "%s: wrote %ld but cannot read it back from %s; "
            "it was %ld (echo %ld > %s restores it)\n",
            s->name, s->wanted, path, value, value, path);
    return FAILED;
  }
  if (after != s->wanted) {
    failure(out, err, "%s: wrote %ld but it reads back %ld from %s; "
            "it was %ld (echo %ld > %s restores it)\n",
            s->name, s->wanted, after, path, value, value, path);
    return FAILED;
  }
  fprintf(out, "changed %s from %ld to %ld; undo: echo %ld > %s\n", s->name, value,
          s->wanted, value, path);
  return CHANGED;
}

/* What no setting written from user space can do, by architecture. */
static void print_notes(const struct open_config *config, int user_access_present, FILE *out)
{
  switch (config->arch) {
  case OPEN_ARCH_ARM64:
    if (!user_access_present)
      fprintf(out, "note: this kernel has no kernel.perf_user_access (arm64 has it since "
              "Linux 5.17): arm64-perfpmc needs a newer kernel or a kernel module\n");
    fprintf(out, "note: arm64-pmc reads PMCCNTR_EL0 without a perf event; user access to it "
            "(PMUSERENR_EL0) is set by the kernel or a kernel module, not by any setting "
            "cpucycles-open can write\n");
    break;
  case OPEN_ARCH_ARM32:
    fprintf(out, "note: arm32-cortex and arm32-1176 need user access to the cycle counter, "
            "which only the kernel or a kernel module can enable, not any setting "
            "cpucycles-open can write\n");
    break;
  case OPEN_ARCH_RISCV:
    fprintf(out, "note: riscv64-rdcycle and riscv32-rdcycle read the cycle counter without "
            "a perf event, which needs kernel.perf_user_access = 2, the kernel's deprecated "
            "legacy mode; cpucycles-open does not set it: 1 is enough for the perf "
            "counters\n");
    break;
  case OPEN_ARCH_X86:
  case OPEN_ARCH_OTHER:
    break;
  }
}

#define EVENT_SOURCES "/sys/bus/event_source/devices"

/* Whether the kernel offers perf a hardware PMU of the CPU: 1 or 0, or -1
 * when this cannot tell (no listing of event sources, or an architecture
 * whose PMU names are not known here).  On x86 the PMU is cpu (cpu_core
 * and cpu_atom on a hybrid CPU), where the rdpmc switch lives; on Arm each
 * core PMU has a cpus file; RISC-V's SBI PMU is cpu.  A virtual machine
 * without a virtual PMU lists only software sources (software,
 * tracepoint, breakpoint, msr, ...). */
static int pmu_exposed(const struct open_config *config)
{
  char dir[4096], path[4096 + 512];
  struct dirent *entry;
  struct stat st;
  DIR *d;
  int found = 0;

  if (config->arch == OPEN_ARCH_OTHER) return -1;
  if ((size_t) snprintf(dir, sizeof dir, "%s%s", config->root, EVENT_SOURCES) >= sizeof dir)
    return -1;
  d = opendir(dir);
  if (!d) return -1;
  while (!found && (entry = readdir(d)) != 0) {
    const char *name = entry->d_name;
    if (name[0] == '.') continue;
    switch (config->arch) {
    case OPEN_ARCH_X86:
      found = strcmp(name, "cpu") == 0 || strcmp(name, "cpu_core") == 0
              || strcmp(name, "cpu_atom") == 0;
      break;
    case OPEN_ARCH_RISCV:
      found = strcmp(name, "cpu") == 0;
      break;
    case OPEN_ARCH_ARM32:
    case OPEN_ARCH_ARM64:
      found = (size_t) snprintf(path, sizeof path, "%s/%s/cpus", dir, name) < sizeof path
              && stat(path, &st) == 0;
      break;
    case OPEN_ARCH_OTHER:
      break;
    }
  }
  closedir(d);
  return found;
}

/* Says that no setting can help where the CPU's PMU is not there. */
static void print_no_pmu(const struct open_config *config, FILE *out)
{
  fprintf(out, "note: no hardware performance counters here: %s has no %s (a virtual "
          "machine without a virtual PMU, or a kernel without the PMU's driver): the "
          "perf counters%s cannot work whatever the settings say; the %s need no "
          "change\n", EVENT_SOURCES,
          config->arch == OPEN_ARCH_X86 ? "cpu, cpu_core or cpu_atom"
          : config->arch == OPEN_ARCH_RISCV ? "cpu" : "PMU that lists its CPUs",
          config->arch == OPEN_ARCH_X86 ? " and RDPMC" : "",
          config->arch == OPEN_ARCH_X86 ? "time-stamp counter and the OS clocks"
          : "timers and the OS clocks");
}

int open_counters_run(const struct open_config *config, FILE *out, FILE *err)
{
  size_t i;
  int changed = 0, pending = 0, failed = 0, user_access_present = 0, no_pmu;

  if (!config->privileged && !config->dry_run) {
    failure(out, err, "must be run as root: it writes kernel settings; "
            "nothing was changed (--dry-run shows what it would change, without root)\n");
    return 1;
  }
  for (i = 0; i < SETTINGS; i++) {
    enum result r = apply(config, &settings[i], out, err);
    if (r != ABSENT && strcmp(settings[i].name, "kernel.perf_user_access") == 0)
      user_access_present = 1;
    if (r == CHANGED) changed++;
    if (r == WOULD_CHANGE) pending++;
    if (r == FAILED) failed++;
  }
  no_pmu = pmu_exposed(config) == 0;
  print_notes(config, user_access_present, out);
  if (no_pmu) print_no_pmu(config, out);
  if (changed)
    fprintf(out, "these changes last until the next reboot; the undo commands above "
            "restore the old values sooner\n");
  if (config->dry_run && pending)
    fprintf(out, "dry run: nothing was changed\n");
  if (!changed && !pending && !failed)
    fputs(no_pmu ? "nothing cpucycles-open can change would help here: there is no "
                   "PMU to open\n" : "nothing to change\n", out);
  return failed ? 1 : 0;
}
