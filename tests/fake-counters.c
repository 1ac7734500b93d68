#include <signal.h>
#include <string.h>
#include "fake-counters.h"
#include "fault.h"
#include "select.h"

struct fake fakes[FAKE_SLOTS];

void fakes_reset(void)
{
  int i;
  memset(fakes, 0, sizeof fakes);
  for (i = 0; i < FAKE_SLOTS; i++) {
    fakes[i].info.kind = COUNTER_ONCORE;
    fakes[i].steps[0] = 1;
    fakes[i].nsteps = 1;
    fake_counters[i].check = COUNTER_TRIES;
  }
}

static long long fake_read(struct fake *f)
{
  long n;
  int attempt;

  if (f->hook) f->hook(f);
  n = f->reads++;
  attempt = (int) (n / SELECT_SAMPLES);

  switch (f->failure) {
    case FAKE_READ_SIGILL:
#ifdef _WIN32
      /* an illegal instruction (ud2 on x86), as a refused counter raises */
      __builtin_trap();
#else
      raise(SIGILL);
#endif
      return 0;
    case FAKE_NEVER_MOVES:
      return 42;
    case FAKE_DECREASES:
      if (attempt < f->bad_attempts && n % SELECT_SAMPLES == SELECT_SAMPLES / 2)
        return f->value -= 1000;
      break;
    default:
      break;
  }
  f->value += f->steps[n % f->nsteps];
  return f->value;
}

static int fake_setup(struct fake *f, struct counter_info *info)
{
  f->setups++;
  if (f->hook) f->hook(f);
  info->setting = f->info.setting; /* read before it refuses or faults */
  if (f->failure == FAKE_SETUP_REFUSES
      || (f->failure == FAKE_WORKS_ONCE && f->setups > 1))
    return counter_refuse(info, f->info.refusal, f->info.refusal_errno);
  if (f->failure == FAKE_SETUP_SIGSEGV)
    fault_segv();
  *info = f->info;
  f->reads = 0;
  return 0;
}

#define SLOT(i) \
  static long long read##i(void) { return fake_read(&fakes[i]); } \
  static int setup##i(struct counter_info *info) { return fake_setup(&fakes[i], info); } \
  static void release##i(void) { fakes[i].releases++; }
SLOT(0)
SLOT(1)
SLOT(2)
SLOT(3)

struct counter fake_counters[FAKE_SLOTS] = {
  { "fake-0", read0, setup0, release0, 0, COUNTER_TRIES },
  { "fake-1", read1, setup1, release1, 0, COUNTER_TRIES },
  { "fake-2", read2, setup2, release2, 0, COUNTER_TRIES },
  { "fake-3", read3, setup3, release3, 0, COUNTER_TRIES },
};
