/* The kernel's user-read switches (rdpmc.h).  Linux sets CR4.PCE, which
 * allows RDPMC in user mode, by devices/cpu/rdpmc (arch/x86/events/core.c). */
#include <config.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "readfile.h"
#include "rdpmc.h"

/* One digit and its newline, as both switches write it; else -1. */
static int one_digit(const char *buf, ssize_t len, int full)
{
  if (len < 0 || full) return -1;
  if (len == 2 && buf[1] == '\n') len = 1;
  if (len != 1 || buf[0] < '0' || buf[0] > '9') return -1;
  return buf[0] - '0';
}

#ifdef _WIN32
int cpucycles_rdpmc_switch_read(const char *root, struct counter_setting *seen)
{
  (void) root;
  (void) seen;
  return -1; /* no sysfs: nothing to ask */
}
#else
/* The core PMUs' directories under /sys/bus/event_source/devices. */
static const char *const core_pmus[] = { "cpu", "cpu_core", "cpu_atom" };
#define CORE_PMUS (sizeof core_pmus / sizeof core_pmus[0])

/* Relative to the devices directory, opened once: each path walked in
 * sysfs costs microseconds in a VM, and this runs in every x86-64 first
 * call. */
int cpucycles_rdpmc_switch_read(const char *root, struct counter_setting *seen)
{
  char path[32], buf[16];
  int found = 0, result = 2, dir, fd, digit, full;
  ssize_t len;
  size_t i;

  dir = cpucycles_open_under(root, "/sys/bus/event_source/devices");
  /* no such directory (sysfs not mounted, not Linux): nothing to ask */
  if (dir < 0) return -1;
  for (i = 0; i < CORE_PMUS && result == 2; i++) {
    memcpy(path, core_pmus[i], strlen(core_pmus[i]));
    memcpy(path + strlen(core_pmus[i]), "/rdpmc", sizeof "/rdpmc");
    fd = cpucycles_openat_retrying(dir, path);
    if (fd < 0) {
      /* no such PMU, or no switch (before 3.4: no RDPMC); else unknown */
      if (errno != ENOENT && errno != ENOTDIR) result = 1;
      continue;
    }
    found = 1;
    len = cpucycles_read_fd_start(fd, buf, sizeof buf, &full);
    digit = one_digit(buf, len, full); /* -1: unreadable, not one digit */
    if (digit != 2) result = 1;
    if (seen) { /* the switch that decided: the last read */
      seen->value = digit;
      seen->known = digit >= 0;
    }
    close(fd);
  }
  close(dir);
  if (result != 2) return result;
  /* no core PMU at all: no PMU driver */
  return found ? 2 : 0;
}
#endif

int cpucycles_perf_user_access(const char *root)
{
  char buf[16];
  int full;
  ssize_t len = cpucycles_read_file_start(root, "/proc/sys/kernel/perf_user_access",
                                          buf, sizeof buf, &full);
  int value = one_digit(buf, len, full);
  return value <= 2 ? value : -1;
}
