/* The x86 Linux RDPMC switch (rdpmc.h).
 *
 * Linux sets CR4.PCE, which lets user mode execute RDPMC, according to
 * /sys/bus/event_source/devices/cpu/rdpmc (arch/x86/events/core.c): 0
 * never, 1 only for a process that has mmap()ed a perf event's page, 2
 * for every process.  Under 1, a raw RDPMC that works during the probe
 * because another counter's event is mapped at that moment would fault
 * once that event is closed; so the raw counter asks for 2.  Only the PMU
 * driver sets CR4.PCE: where sysfs shows no core PMU, RDPMC faults in every
 * process, and the raw counter is not tried at all. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "readfile.h"
#include "rdpmc.h"

static const char *const core_pmus[] = {
  "/sys/bus/event_source/devices/cpu/rdpmc",
  "/sys/bus/event_source/devices/cpu_core/rdpmc",
  "/sys/bus/event_source/devices/cpu_atom/rdpmc",
};

/* The file holds "2" (and its newline). */
static int says_always(const char *root, const char *path)
{
  char buf[16];
  int full;
  ssize_t len = cpucycles_read_file_start(root, path, buf, sizeof buf, &full);
  if (len < 0 || full) return 0;
  if (len == 2 && buf[1] == '\n') len = 1;
  return len == 1 && buf[0] == '2';
}

/* Whether PATH (a directory) exists under ROOT: 1, 0 when not, -1 when
 * it cannot be told. */
static int exists(const char *root, const char *path)
{
  int fd = cpucycles_open_under(root, path);
  if (fd >= 0) {
    close(fd);
    return 1;
  }
  return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
}

int cpucycles_rdpmc_switch(const char *root)
{
  int found = 0;
  size_t i;

  for (i = 0; i < sizeof core_pmus / sizeof core_pmus[0]; i++) {
    int fd = cpucycles_open_under(root, core_pmus[i]);
    char dir[64];
    size_t n;
    if (fd < 0) {
      if (errno != ENOENT && errno != ENOTDIR) return 1;
      /* no such PMU, or a PMU without the switch (a kernel before 3.4):
       * nothing to ask there */
      n = strlen(core_pmus[i]) - strlen("/rdpmc");
      memcpy(dir, core_pmus[i], n);
      dir[n] = 0;
      if (exists(root, dir) != 0) return -1;
      continue;
    }
    close(fd);
    found = 1;
    if (!says_always(root, core_pmus[i])) return 1;
  }
  if (found) return 2;
  /* no core PMU: a PMU driver is absent only where sysfs shows the bus */
  return exists(root, "/sys/bus/event_source/devices") == 1 ? 0 : -1;
}

int cpucycles_perf_user_access(const char *root)
{
  char buf[16];
  int full;
  ssize_t len = cpucycles_read_file_start(root, "/proc/sys/kernel/perf_user_access",
                                          buf, sizeof buf, &full);
  if (len < 0 || full) return -1;
  if (len == 2 && buf[1] == '\n') len = 1;
  if (len != 1 || buf[0] < '0' || buf[0] > '2') return -1;
  return buf[0] - '0';
}
