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
 *     matter, while the 64-bit atomics of 32-bit ISAs are exercised).
 *
 * Prints "cross-smoke: N passed, N failed" last; exits 1 on any failure. */
#include "counter.h"
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "adapters.h"
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

static const struct counter fake32 = { "fake32", fake32_read, fake32_setup, 0, 0 };

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

int main(void)
{
  setvbuf(stdout, 0, _IONBF, 0);
  public_api();
  /* After the public checks: in a static build the adapters below share
   * the library's wrapper state. */
  each_counter(cpucycles_persecond());
  extend32_synthetic();
  extend32_installed();
  printf("cross-smoke: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
