/* libFuzzer target: every single-value source of the frequency estimate,
 * through the root-prefix seam: ROOT/etc/cpucyclespersecond, the sysfs
 * files scaling_setspeed, scaling_max_freq and clock_tick, and the
 * cpucyclespersecond environment value (no /proc/cpuinfo).
 *
 * Input: up to five parts separated by 0xff bytes, in that order; a part
 * that is missing means that file is absent (or the variable unset).
 * Failures: a crash; an estimate outside [1e6, 1e11]; an estimate other
 * than the default when no source exists at all. */
#include <assert.h>
#include <stdint.h>
#include <string.h>
#include "fixture.h"
#include "persecond.h"

#define CPU0 "/sys/devices/system/cpu/cpu0"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void) argc; (void) argv;
  fixture_create();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const char *const files[] = {
    "/etc/cpucyclespersecond", CPU0 "/cpufreq/scaling_setspeed",
    CPU0 "/cpufreq/scaling_max_freq", CPU0 "/clock_tick"
  };
  const uint8_t *part = data, *end = data + size;
  char env[4096];
  int present = 0, have_env = 0, i;
  long long hz;

  if (size > 16384) return 0;
  for (i = 0; i < 5; i++) {
    const uint8_t *sep;
    size_t len;
    if (!part) {
      if (i < 4) fixture_put(files[i], 0, 0);
      continue;
    }
    sep = memchr(part, 0xff, (size_t) (end - part));
    len = (size_t) ((sep ? sep : end) - part);
    if (i < 4) {
      fixture_put(files[i], part, len);
    } else {
      if (len >= sizeof env) len = sizeof env - 1;
      memcpy(env, part, len);
      env[len] = 0; /* a C string ends at its first NUL, as getenv's does */
      have_env = 1;
    }
    present++;
    part = sep ? sep + 1 : 0;
  }
  hz = cpucycles_persecond_estimate(fixture_root, have_env ? env : 0);
  assert(hz >= 1000000LL && hz <= 100000000000LL);
  if (!present) assert(hz == CPUCYCLES_PERSECOND_DEFAULT);
  return 0;
}
