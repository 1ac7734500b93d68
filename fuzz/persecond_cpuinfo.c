/* libFuzzer target: /proc/cpuinfo as the frequency source, through the
 * root-prefix seam of cpucycles_persecond_estimate (the input becomes
 * ROOT/proc/cpuinfo; no /etc or sysfs file, no environment value).
 *
 * Failures: a crash (ASan/UBSan included); an estimate outside
 * [1e6, 1e11]; an estimate other than the default from a file that names
 * none of the keys the parser knows ("cpu MHz", "clock"). */
#include <assert.h>
#include <stdint.h>
#include <string.h>
#include "fixture.h"
#include "persecond.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void) argc; (void) argv;
  fixture_create();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  long long hz;
  if (size > 200000) return 0;
  fixture_put("/proc/cpuinfo", data, size);
  hz = cpucycles_persecond_estimate(fixture_root, 0);
  assert(hz >= 1000000LL && hz <= 100000000000LL);
  if (!memmem(data, size, "MHz", 3) && !memmem(data, size, "clock", 5))
    assert(hz == CPUCYCLES_PERSECOND_DEFAULT);
  return 0;
}
