/* cross-smoke: what tests/check-cross.sh runs under qemu-user for each
 * triplet, beside cpucycles-info and the Check programs.  It needs nothing
 * but the library, so it runs on every host the cross compilers build for,
 * and it assumes nothing about emulated timing: counters under qemu may
 * trap, stand still, or tick at the host's rate.
 *
 *  1. the public API: the probe (traced) chooses a counter other than
 *     default-zero, cpucycles() never decreases and moves across a sleep,
 *     cpucycles_persecond() is plausible;
 *  2. every compiled-in counter alone: the probe's verdict on it, and when
 *     it survives, 1000 reads through the adapter the library would install
 *     (scaling, 32-to-64-bit extension) never decrease;
 *  3. extend32 on synthetic readings: wraps are placed where the clock says;
 *     and the installed 32-bit wrapper, on a fake 32-bit counter that wraps
 *     every 16.8 ms, counts the wraps of a 50 ms sleep (its ticks come
 *     from the same clock as the wrapper's, so emulation speed does not
 *     matter, while the 64-bit atomics of 32-bit ISAs are exercised);
 *  4. exact scaling: the installed scaled wrapper over a fake clock twenty
 *     years after the first call, as its result passes 2^63 and behind
 *     the first call, and the
 *     arithmetic (128-bit where the compiler has it, 64-bit only on 32-bit
 *     ISAs) against a bit-by-bit reference, on every ISA and byte order.
 *
 * Prints "cross-smoke: N passed, N failed" last; exits 1 on any failure. */
#include "counter.h"
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "adapters.h"
#include "../exact-reference.h"
#include "select.h"
#include "cpucycles.h"

static int passed, failed;

static void check(int ok, const char *what)
{
  printf("%s: %s\n", ok ? "ok" : "FAIL", what);
  if (ok) passed++; else failed++;
}

static void pause_ms(long ms)
{
  struct timespec t;
  t.tv_sec = ms / 1000;
  t.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&t, 0);
}

static int never_decreases(long long (*read)(void), int n)
{
  long long prev = read(), now;
  int i;
  for (i = 0; i < n; i++) {
    now = read();
    if (now < prev) return 0;
    prev = now;
  }
  return 1;
}

static void public_api(void)
{
  long long a, b, persecond;
  const char *impl;

  cpucycles_tracesetup();
  a = cpucycles();
  impl = cpucycles_implementation();
  persecond = cpucycles_persecond();
  printf("implementation %s, persecond %lld, version %s\n", impl, persecond,
         cpucycles_version());
  check(strcmp(impl, "default-zero") != 0, "the probe chose a real counter");
  check(persecond >= 1000000LL && persecond <= 100000000000LL,
        "persecond between 1 MHz and 100 GHz");
  check(never_decreases(cpucycles, 100000), "cpucycles() never decreases (100000 reads)");
  pause_ms(20);
  b = cpucycles();
  check(b > a, "cpucycles() moves across a 20 ms sleep");
}

static void trace(const struct probe_report *r, void *arg)
{
  (void) arg;
  printf("  probe %d %s precision %lld scaling %f only32 %d\n", r->index,
         r->name, r->precision, r->scaling, r->info.only32);
}

static void each_counter(long long persecond)
{
  int i;
  for (i = 0; i < cpucycles_counter_count; i++) {
    const struct counter *c = cpucycles_counter_table[i];
    struct choice choice;
    char what[160];
    long long (*fn)(void);
    if (!c->setup) {
      printf("  %s: in libcpucycles' list, not built here\n", c->name);
      continue;
    }
    if (cpucycles_select(&cpucycles_counter_table[i], 1, persecond, 0, trace,
                         0, &choice) < 0) {
      printf("  %s: dropped by the probe here\n", c->name);
      continue;
    }
    fn = cpucycles_adapter_for(&choice, persecond);
    snprintf(what, sizeof what, "%s: 1000 reads through its adapter never decrease",
             c->name);
    check(never_decreases(fn, 1000), what);
    if (c->release) c->release();
  }
}

/* extend32 driven by hand: 1000 ticks per microsecond, so 2^32 ticks take
 * 4294967.296 us. */
static void extend32_synthetic(void)
{
  struct extend32 e;
  long long v;
  cpucycles_extend32_start(&e, 1000.0, 0xfffff000ULL, 0);
  v = cpucycles_extend32_value(&e, 0x00001000ULL, 8);  /* wrapped once */
  check(v == 0x100001000LL, "extend32 places a wrap seen 8 us later");
  v = cpucycles_extend32_value(&e, 0x00002000ULL, 4294967 + 12); /* one more */
  check(v == 0x200002000LL, "extend32 counts a whole wrap from the clock");
  v = cpucycles_extend32_value(&e, 0x00003000ULL, 4294967 + 16);
  check(v == 0x200003000LL, "extend32 stays in the wrap after moving its anchor");
}

static long long monotonic_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long) t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* 256 ticks per nanosecond, low 32 bits only: wraps every 16.8 ms. */
static long long fake32_read(void)
{
  return (long long) (((unsigned long long) monotonic_ns() * 256) & 0xffffffffULL);
}

static int fake32_setup(struct counter_info *info)
{
  info->kind = COUNTER_ONCORE;
  info->frequency = 0;
  info->only32 = 1;
  return 0;
}

static const struct counter fake32 = { "fake32", fake32_read, fake32_setup, 0, 0, COUNTER_TRIES };

static void extend32_installed(void)
{
  struct choice choice;
  long long (*fn)(void);
  long long a, b, ns0, ns1;
  double ratio;
  choice.counter = &fake32;
  fake32_setup(&choice.info);
  choice.scaling = 1.0;
  choice.precision = 1;
  fn = cpucycles_adapter_for(&choice, 256000000000LL);
  ns0 = monotonic_ns();
  a = fn();
  pause_ms(50);
  b = fn();
  ns1 = monotonic_ns();
  ratio = (double) (b - a) / 256.0 / (double) (ns1 - ns0);
  printf("extend32 wrapper: %lld ticks over %lld ns (ratio %f)\n", b - a, ns1 - ns0, ratio);
  check(ratio > 0.9 && ratio <= 1.01,
        "extend32 wrapper counts the wraps of a 32-bit counter across a sleep");
  check(never_decreases(fn, 10000), "extend32 wrapper never decreases (10000 reads)");
}

static long long fake_ns;
static long long fake_ns_read(void)
{
  return fake_ns;
}

static int fake_ns_setup(struct counter_info *info)
{
  info->kind = COUNTER_OSCLOCK;
  info->frequency = 1000000000LL;
  info->only32 = 0;
  return 0;
}

static const struct counter fakeclock = { "fakeclock", fake_ns_read, fake_ns_setup, 0, 0, COUNTER_TRIES };

static void scaled_exact(void)
{
  static const long long values[] = {
    1, 3, 10, 23, 1000000LL, 24000000LL, 1000000000LL, 2300000000LL, 2399987654LL,
    4294967295LL, 4294967297LL, 100000000000LL, 9223372036854775807LL
  };
  static const unsigned long long ticks[] = {
    0, 1, 209, 210, 4294967296ULL, 9007199254740993ULL, 631152000000000000ULL,
    (1ULL << 63) + 7, 18446744073709551615ULL
  };
  const unsigned long long twenty_years = 20ULL * 31557600ULL * 1000000000ULL;
  const unsigned long long near_2_63 = (1ULL << 63) / 23 * 10 - 500;
  struct choice choice;
  struct exact_scale scale;
  long long (*fn)(void);
  unsigned long long i, t, v, previous = 0;
  size_t n, d, k;
  int ok = 1, crossed = 0;

  choice.counter = &fakeclock;
  fake_ns_setup(&choice.info);
  choice.scaling = 2.3;
  choice.precision = 203;
  fake_ns = 5;
  fn = cpucycles_adapter_for(&choice, 2300000000LL);
  for (i = 0; i < 1000; i++) {
    t = twenty_years + i;
    fake_ns = (long long) (5 + t);
    if ((unsigned long long) fn() != t / 10 * 23 + t % 10 * 23 / 10) ok = 0;
  }
  check(ok, "scaled wrapper exact twenty years after the first call (2.3 cycles per ns)");
  ok = 1;
  for (i = 0; i < 1000; i++) {
    t = near_2_63 + i;
    fake_ns = (long long) (5 + t);
    v = (unsigned long long) fn();
    if (v != t / 10 * 23 + t % 10 * 23 / 10) ok = 0;
    if (i > 0 && previous < (1ULL << 63) && v >= (1ULL << 63)) crossed = 1;
    previous = v;
  }
  check(ok && crossed, "scaled wrapper passes 2^63 exactly, modulo 2^64");
  fake_ns = 5 - 9;
  v = (unsigned long long) fn();
  fake_ns = 5 - 1000000000LL;
  check(v == (unsigned long long) -21 && fn() == -2300000000LL,
        "scaled wrapper: readings behind the first call are negative, exact");

  ok = 1;
  for (n = 0; n < sizeof values / sizeof values[0]; n++)
    for (d = 0; d < sizeof values / sizeof values[0]; d++) {
      cpucycles_exact_scale_start(&scale, values[n], values[d]);
      for (k = 0; k < sizeof ticks / sizeof ticks[0]; k++) {
        unsigned long long want = reference(ticks[k], (unsigned long long) values[n],
                                            (unsigned long long) values[d]);
        if (cpucycles_exact_scale(&scale, ticks[k]) != want) ok = 0;
        if (cpucycles_exact_scale_portable(&scale, ticks[k]) != want) ok = 0;
      }
    }
  check(ok, "exact scaling, both ways, matches the bit-by-bit reference");
}

int main(void)
{
  setvbuf(stdout, 0, _IONBF, 0);
  public_api();
  /* After the public checks: in a static build the adapters below share
   * the library's wrapper state. */
  each_counter(cpucycles_persecond());
  extend32_synthetic();
  extend32_installed();
  scaled_exact();
  printf("cross-smoke: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
