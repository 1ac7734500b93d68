/* The probe, as libcpucycles-selection.md specifies it and libcpucycles'
 * code refines it: doc/selection.md states each rule, in this order. */
#include "counter.h"
#include <string.h>
#include "multiplier.h"
#include "select.h"

/* By what libcpucycles' setup of the same counter answers: a cycle
 * counter 0; one that may count cycles (a TSC of unknown rate,
 * default-perfevent) or a timer whose multiplier it finds 100; one of
 * known rate (OS clock, TOD clock, a TSC CPUID states) or 32 bits 300. */
long long cpucycles_penalty_of(const struct counter_info *info)
{
  if (info->only32 || (info->frequency > 0 && info->frequency_exact)) return 300;
  switch (info->kind) {
    case COUNTER_ONCORE: return 0;
    case COUNTER_OFFCORE: case COUNTER_PERFEVENT: return 100;
    default: return 300; /* COUNTER_OSCLOCK, whatever its frequency */
  }
}

double cpucycles_scaling_of(const struct counter_info *info, long long persecond)
{
  double ratio;
  if (info->frequency == 0) return 1.0;
  if (info->frequency < 0 || persecond <= 0) return -1;
  ratio = (double) persecond / (double) info->frequency;
  /* a timer's: kept where k/2^j fits (800 MHz over 24 MHz never does) */
  if (info->kind != COUNTER_OSCLOCK && !info->frequency_exact
      && cpucycles_multiplier_of(&ratio, 1) <= 0)
    return -1;
  return ratio;
}

struct trial {
  const struct counter *counter;
  long long persecond;
  long long cutoff;     /* a precision this counter must beat, or -1 */
  long long bump;       /* 10 for each counter before it that worked */
  int skipped;          /* not sampled: it could not win */
  struct counter_info info;
  double scaling;
  double measured;      /* rate_unknown: cycles per tick measured, or 0 */
  long long precision;  /* the result: -1 when dropped */
  enum probe_outcome outcome; /* as far as the trial got */
  enum probe_stage stage;
  struct rate_check rate;
  int backwards;
  int attempts;
  struct catch_status catch; /* PROBE_NOT_TRIED: why */
};

/* The smallest nonzero step of SELECT_SAMPLES reads, -1 when they
 * decrease somewhere, 0 when they never increase; folded as read (the
 * first call's stack may be small), every read made, nothing but a
 * comparison between two. */
static long long smallest_step(long long (*read)(void), int only32)
{
  long long mask = only32 ? 0xffffffffLL : -1LL;
  long long smallest = -1, previous = read() & mask;
  int backwards = 0, i;
  for (i = 1; i < SELECT_SAMPLES; i++) {
    long long now = read() & mask;
    if (now < previous) backwards = 1;
    else if (now > previous && (smallest < 0 || now - previous < smallest))
      smallest = now - previous;
    previous = now;
  }
  if (backwards) return -1;
  return smallest < 0 ? 0 : smallest;
}

/* A stated rate (not an OS clock's) that the clock contradicts: a timer
 * of unknown rate, as libcpucycles takes every timer; penalty as stated. */
static void check_stated_rate(struct trial *t, const struct rate_window *w)
{
  long long (*read)(void) = t->counter->read;
  if (!t->rate.stated) return;
  t->rate.verdict = cpucycles_rate_window_close(w, read, t->rate.stated, &t->rate.seen);
  if (t->rate.verdict != RATE_DISAGREES) return;
  t->info.frequency = 0;
  t->info.frequency_exact = 0;
  t->info.rate_unknown = 1;
}

/* Sampling, then scaling, after setup said yes, under the catcher where
 * the reads may fault: a crash leaves precision -1, outcome and stage as
 * far as the trial got. */
static void trial_reads(void *arg)
{
  struct trial *t = arg;
  long long (*read)(void) = t->counter->read;
  long long step = 0, penalty, scaled;
  struct rate_window window;

  penalty = cpucycles_penalty_of(&t->info) + t->bump;
  /* Penalty and bump alone tie the best so far: it cannot win, spare the
   * reads (and a measured multiplier's 30 ms).  Never when tracing. */
  if (t->cutoff >= 0 && penalty >= t->cutoff) {
    t->skipped = 1;
    return;
  }
  t->stage = PROBE_IN_READS;
  if (t->info.frequency > 0 && t->info.kind != COUNTER_OSCLOCK && !t->info.only32) {
    t->rate.stated = t->info.frequency;
    cpucycles_rate_window_open(&window, read);
  }
  while (t->attempts < SELECT_ATTEMPTS && step <= 0) {
    t->attempts++;
    step = smallest_step(read, t->info.only32);
    if (step < 0) t->backwards++;
  }
  if (step <= 0) {
    t->outcome = t->backwards ? PROBE_BACKWARDS : PROBE_STUCK;
    return;
  }
  check_stated_rate(t, &window);
  if (t->info.rate_unknown)
    t->scaling = cpucycles_multiplier_measure(read, t->persecond, &t->measured);
  else
    t->scaling = cpucycles_scaling_of(&t->info, t->persecond);
  if (t->scaling <= 0) {
    t->outcome = PROBE_MISFIT;
    return;
  }
  t->outcome = PROBE_WORKS;
  /* libcpucycles' differences of truncated scaled reads: the scaled step
   * truncated, at least 1.  The margin keeps an exact integer product
   * (25 x 2.4) from truncating below where the FPU keeps more bits (x87) */
  scaled = (long long) ((double) step * t->scaling + 1e-6);
  t->precision = (scaled < 1 ? 1 : scaled) + penalty;
}

/* setup; 0 when it said yes. */
static int trial_setup(struct trial *t)
{
  if (t->counter->setup(&t->info) == 0) return 0;
  t->outcome = PROBE_REFUSED;
  return -1;
}

/* Setup, then scaling and sampling, all under the catcher. */
static void trial_run(void *arg)
{
  struct trial *t = arg;
  if (trial_setup(t) == 0) trial_reads(t);
}

/* Armed at the first trial that needs it, disarmed when the probe ends. */
struct catcher {
  int tried;                  /* cpucycles_catch_arm was called */
  int armed;                  /* and succeeded */
  struct catch_status status; /* why not, when not */
};

/* Run fn(t) with crash signals caught: 0 when it ran (a caught signal in
 * *signal), -1 when it could not be run (why in t->catch). */
static int caught_run(struct catcher *c, void (*fn)(void *), struct trial *t,
                      int *signal)
{
  if (!c->tried) {
    c->tried = 1;
    c->armed = cpucycles_catch_arm(&c->status) == 0;
  }
  if (!c->armed) {
    t->catch = c->status;
    return -1;
  }
  if (cpucycles_catch_try(fn, t, signal, &t->catch) != 0
      && t->catch.problem != CATCH_READY)
    return -1;
  return 0;
}

/* One counter's trial: run as its check says (counter.h). */
static void trial(struct catcher *c, struct trial *t, int *signal)
{
  if (t->counter->check == COUNTER_ASKS) {
    if (trial_setup(t) != 0) return;
    if (!t->info.may_fault) {
      trial_reads(t);
      return;
    }
    t->stage = PROBE_IN_READS;
  }
  if (caught_run(c, t->counter->check == COUNTER_ASKS ? trial_reads : trial_run,
                 t, signal) != 0)
    t->outcome = PROBE_NOT_TRIED;
}

/* The trial in the report's terms. */
static void report_trial(const struct trial *t, int n, int signal,
                         select_report_fn *report, void *report_arg)
{
  struct probe_report r = { .index = n, .name = t->counter->name,
                            .outcome = signal ? PROBE_CRASHED : t->outcome,
                            .stage = t->stage, .info = t->info,
                            .persecond = t->persecond,
                            .scaling = t->scaling > 0 ? t->scaling : 0,
                            .precision = t->precision < 0 ? 0 : t->precision,
                            .bump = t->precision < 0 ? 0 : t->bump,
                            .signal = signal, .rate = t->rate, .backwards = t->backwards,
                            .attempts = t->attempts, .catch = t->catch };
  if (t->info.frequency > 0)
    r.ratio = (double) t->persecond / (double) t->info.frequency;
  else if (t->info.rate_unknown)
    r.ratio = t->measured;
  report(&r, report_arg);
}

/* Precision of table[n], bump included, or -1 when dropped or skipped. */
static long long probe(struct catcher *c, struct trial *t,
                       const struct counter *const *table, int n,
                       long long persecond, long long cutoff, long long bump,
                       select_report_fn *report, void *report_arg)
{
  int signal = 0;
  /* the outcome is overwritten by every way out but the cutoff;
   * trial_reads sets the precision last: a crash anywhere leaves it -1 */
  *t = (struct trial) { .counter = table[n], .persecond = persecond,
                        .cutoff = cutoff, .bump = bump, .precision = -1,
                        .outcome = PROBE_STUCK, .stage = PROBE_IN_SETUP };
  if (t->counter->setup) trial(c, t, &signal);
  else t->outcome = PROBE_NOT_BUILT;
  if (report) report_trial(t, n, signal, report, report_arg);
  return t->precision;
}

static void take(struct choice *best, const struct trial *t)
{
  best->counter = t->counter;
  best->info = t->info;
  best->scaling = t->scaling;
  best->precision = t->precision;
}

static void release(const struct counter *c)
{
  if (c->release) c->release();
}

/* default-zero in *best, table[chosen] released if one was chosen; -1. */
static int choose_default_zero(struct choice *best,
                               const struct counter *const *table, int chosen)
{
  if (chosen >= 0) release(table[chosen]);
  best->counter = &cpucycles_counter_default_zero;
  memset(&best->info, 0, sizeof best->info);
  cpucycles_counter_default_zero.setup(&best->info);
  best->scaling = 1.0;
  best->precision = -1;
  return -1;
}

/* The index of the counter called name: count for default-zero, which is
 * not in the table; -1 for no name or an unknown one. */
static int find(const struct counter *const *table, int count, const char *name)
{
  int i;
  if (!name) return -1;
  if (strcmp(name, cpucycles_counter_default_zero.name) == 0) return count;
  for (i = 0; i < count; i++)
    if (table[i]->setup && strcmp(table[i]->name, name) == 0) return i;
  return -1;
}

static int select_with(struct catcher *c, const struct counter *const *table,
                       int count, long long persecond, const char *name,
                       select_report_fn *report, void *report_arg,
                       struct choice *best)
{
  struct trial t;
  int i, chosen = -1, may_skip = !report;
  int named = find(table, count, name);

  choose_default_zero(best, table, -1);

  /* The named counter alone, when nobody asked to see the others. */
  if (!report && named == count) return -1;
  if (!report && named >= 0) {
    if (probe(c, &t, table, named, persecond, -1, 0, 0, 0) >= 0) {
      take(best, &t);
      return named;
    }
    release(t.counter);
    named = -1;
  }

  /* A skipped counter is taken as not working, so later bumps may be 10
   * short per skip: enough to decide that a later counter cannot win
   * either, not that it wins.  When a counter after a skip would win, the
   * probe starts again and samples every counter, as libcpucycles does. */
  for (;;) {
    int worked = 0, skipped = 0, redo = 0;
    for (i = 0; i < count && !redo; i++) {
      long long precision = probe(c, &t, table, i, persecond,
                                  !may_skip || chosen < 0 ? -1 : best->precision,
                                  10LL * worked, report, report_arg);
      /* A working named counter beats every other, and nothing beats it. */
      int better = precision >= 0
                   && (chosen < 0 || i == named
                       || (chosen != named && precision < best->precision));
      if (precision >= 0) worked++;
      if (t.skipped) skipped = 1;
      redo = better && skipped;
      if (better && !redo) {
        if (chosen >= 0) release(table[chosen]);
        chosen = i;
        take(best, &t);
      } else {
        release(t.counter);
      }
    }
    if (!redo) break;
    chosen = choose_default_zero(best, table, chosen);
    may_skip = 0;
  }
  if (report) {
    struct probe_report last = { .index = count, .outcome = PROBE_FALLBACK,
                                 .name = cpucycles_counter_default_zero.name,
                                 .persecond = persecond };
    report(&last, report_arg);
  }
  if (named == count && chosen >= 0)
    chosen = choose_default_zero(best, table, chosen);
  return chosen;
}

int cpucycles_select(const struct counter *const *table, int count,
                     long long persecond, const char *name,
                     select_report_fn *report, void *report_arg,
                     struct choice *best)
{
  struct catcher c;
  int chosen;
  memset(&c, 0, sizeof c);
  chosen = select_with(&c, table, count, persecond, name, report, report_arg,
                       best);
  if (c.armed) cpucycles_catch_disarm();
  return chosen;
}
