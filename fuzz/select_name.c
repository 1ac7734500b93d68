/* libFuzzer target: the counter override (CPUCYCLES_COUNTER), through
 * cpucycles_select with a table of fake counters and the fuzzed name.
 *
 * Failures: a crash; choosing a counter whose name is not exactly the
 * input when the input names a working counter; anything but default-zero
 * for exactly "default-zero"; anything but the normal choice otherwise (a
 * prefix, a suffix, a refused counter's name, an unknown name or garbage
 * all probe the table as if no name were given). */
#include <assert.h>
#include <stdint.h>
#include <string.h>
#include "counter.h"
#include "select.h"

static long long ticks;
static long long read_fast(void) { return ticks += 3; }
static long long read_slow(void) { return ticks += 1000; }
static int setup_oncore(struct counter_info *info)
{
  info->kind = COUNTER_ONCORE; info->frequency = 0; info->only32 = 0;
  return 0;
}
static int setup_osclock(struct counter_info *info)
{
  info->kind = COUNTER_OSCLOCK; info->frequency = 0; info->only32 = 0;
  return 0;
}
static int setup_refuses(struct counter_info *info) { (void) info; return -1; }

static const struct counter fast = { "fake-fast", read_fast, setup_oncore, 0, 0, COUNTER_ASKS };
static const struct counter slow = { "fake-slow", read_slow, setup_osclock, 0, 0, COUNTER_ASKS };
static const struct counter refuses = { "fake-refuses", read_fast, setup_refuses, 0, 0, COUNTER_ASKS };
static const struct counter *const table[] = { &fast, &slow, &refuses };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char name[256];
  struct choice best;
  int chosen;

  if (size >= sizeof name) return 0;
  memcpy(name, data, size);
  name[size] = 0;
  chosen = cpucycles_select(table, 3, 2000000000LL, name, 0, 0, &best);
  if (strcmp(name, "default-zero") == 0) {
    assert(chosen == -1 && best.counter == &cpucycles_counter_default_zero);
    return 0;
  }
  if (strcmp(name, "fake-slow") == 0) {
    assert(chosen == 1 && best.counter == &slow);
  } else {
    assert(chosen == 0 && best.counter == &fast);
  }
  assert(best.precision > 0);
  return 0;
}
