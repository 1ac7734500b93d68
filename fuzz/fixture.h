/* A fixture root for the frequency sources: ROOT/etc, ROOT/proc,
 * ROOT/sys/devices/system/cpu/cpu0/cpufreq, created once per process under
 * $TMPDIR, with files written or removed for each input. */
#ifndef FUZZ_FIXTURE_H
#define FUZZ_FIXTURE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fixture_root[256];

static void fixture_create(void)
{
  static const char *const dirs[] = {
    "/etc", "/proc", "/sys", "/sys/devices", "/sys/devices/system",
    "/sys/devices/system/cpu", "/sys/devices/system/cpu/cpu0",
    "/sys/devices/system/cpu/cpu0/cpufreq"
  };
  const char *tmp = getenv("TMPDIR");
  char path[512];
  size_t i;
  snprintf(fixture_root, sizeof fixture_root, "%s/cpucycles-fuzz.XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(fixture_root)) abort();
  for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    snprintf(path, sizeof path, "%s%s", fixture_root, dirs[i]);
    if (mkdir(path, 0700) != 0) abort();
  }
}

/* Write data as ROOT/file, or remove it when data is NULL. */
static void fixture_put(const char *file, const void *data, size_t len)
{
  char path[512];
  int fd;
  snprintf(path, sizeof path, "%s%s", fixture_root, file);
  unlink(path);
  if (!data) return;
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) abort();
  if (len && write(fd, data, len) != (ssize_t) len) abort();
  close(fd);
}

#endif
