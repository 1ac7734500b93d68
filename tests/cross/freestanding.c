/* freestanding.c: run one counter file on an ISA for which Debian has no
 * C library to link against (loong64, riscv32), under qemu-user.
 *
 *   clang --target=TRIPLE -ffreestanding -nostdlib -static -fuse-ld=lld \
 *     -DCOUNTER_FILE='"loong64-rdtime.c"' -DCOUNTER=cpucycles_counter_loong64_rdtime \
 *     -Ilib/counters -Ilib -Iinclude tests/cross/freestanding.c
 *
 * The program is the counter file, its setup, and the probe's checks on
 * 1000 reads (never decreasing, increasing at least once, 10 attempts),
 * with nothing of libc: its own _start, write(2) and exit(2) as raw system
 * calls (the generic Linux numbers, which both ISAs use).  No signal is
 * caught: a counter the emulator refuses dies with SIGILL, which the
 * caller reports.  Prints one line and exits 0 when the counter works. */
#include COUNTER_FILE

#define SYS_write 64
#define SYS_exit 93
#define SAMPLES 1000
#define ATTEMPTS 10

extern const struct counter COUNTER;

static long syscall3(long number, long a, long b, long c)
{
#if defined(__loongarch__)
  register long a0 __asm__("$a0") = a;
  register long a1 __asm__("$a1") = b;
  register long a2 __asm__("$a2") = c;
  register long a7 __asm__("$a7") = number;
  __asm__ __volatile__("syscall 0" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a7) : "memory");
  return a0;
#elif defined(__riscv)
  register long a0 __asm__("a0") = a;
  register long a1 __asm__("a1") = b;
  register long a2 __asm__("a2") = c;
  register long a7 __asm__("a7") = number;
  __asm__ __volatile__("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a7) : "memory");
  return a0;
#else
#error "freestanding.c knows the system calls of loongarch and riscv only"
#endif
}

#ifdef CPUCYCLES_RDPMC_H
/* The rdcycle counters ask kernel.perf_user_access through lib/rdpmc.c,
 * which needs a C library: here, as on a kernel without the setting,
 * there is nothing to ask (the reads are tried). */
int cpucycles_perf_user_access(const char *root)
{
  (void) root;
  return -1;
}
#endif

static void say(const char *s)
{
  long n = 0;
  while (s[n]) n++;
  syscall3(SYS_write, 1, (long) s, n);
}

/* Decimal, for the frequency and the step. */
static void say_number(unsigned long long v)
{
  char buf[24];
  int i = (int) sizeof buf - 1;
  buf[i] = 0;
  do {
    buf[--i] = (char) ('0' + v % 10);
    v /= 10;
  } while (v && i > 0);
  say(buf + i);
}

static __attribute__((noreturn)) void finish(int status)
{
  for (;;) syscall3(SYS_exit, status, 0, 0);
}

static long long samples[SAMPLES];

/* The probe's sampling (lib/select.c): the smallest nonzero step, or -1
 * when the reads decrease somewhere or never move. */
static long long smallest_step(void)
{
  long long smallest = -1;
  int i;
  for (i = 0; i < SAMPLES; i++) samples[i] = COUNTER.read();
  for (i = 1; i < SAMPLES; i++) {
    long long d = samples[i] - samples[i - 1];
    if (d < 0) return -1;
    if (d > 0 && (smallest < 0 || d < smallest)) smallest = d;
  }
  return smallest;
}

static const char *kind_name(enum counter_kind kind)
{
  switch (kind) {
    case COUNTER_ONCORE: return "on-core";
    case COUNTER_OFFCORE: return "off-core";
    case COUNTER_PERFEVENT: return "perf event";
    case COUNTER_OSCLOCK: return "OS clock";
  }
  return "?";
}

void _start(void)
{
  struct counter_info info = { .kind = COUNTER_OSCLOCK };
  long long step = -1;
  int attempt;

  say(COUNTER.name);
  if (COUNTER.setup(&info) != 0) {
    say(": setup refused\n");
    finish(1);
  }
  for (attempt = 0; attempt < ATTEMPTS && step < 0; attempt++) step = smallest_step();
  say(": ");
  say(kind_name(info.kind));
  say(", frequency ");
  say_number((unsigned long long) info.frequency);
  say(" Hz, only32 ");
  say_number((unsigned long long) info.only32);
  if (step < 0) {
    say(", reads decrease or never move\n");
    finish(1);
  }
  say(", smallest step ");
  say_number((unsigned long long) step);
  say(" ticks\n");
  finish(0);
}
