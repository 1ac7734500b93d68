/* The probe: which compiled-in counter this machine should use.
 * Pure logic over a table of counters, so that tests can feed it fakes. */
#ifndef CPUCYCLES_SELECT_H
#define CPUCYCLES_SELECT_H

#include "counter.h"
#include "persecond.h"

#define SELECT_SAMPLES 1000  /* reads per attempt */
#define SELECT_ATTEMPTS 10   /* attempts before a counter is dropped */

struct choice {
  const struct counter *counter; /* never NULL: default-zero at worst */
  struct counter_info info;
  double scaling;                /* cycles per tick */
  long long precision;           /* in cycles, penalty included */
};

/* What the probe found out about one counter: why it was kept or
 * dropped.  The library formats its trace line from it; cpucycles-info
 * --explain and --json put it in words. */
enum probe_outcome {
  PROBE_WORKS,          /* measured: precision (kept or not, see choice) */
  PROBE_REFUSED,        /* setup returned -1: info.refusal, refusal_errno */
  PROBE_CRASHED,        /* a crash signal (signal) stopped setup or reads */
  PROBE_MISFIT,         /* ratio = persecond/frequency is not close to k/2^j
                           (or the frequency or persecond is not positive) */
  PROBE_BACKWARDS,      /* went backwards in some of the attempts and never
                           increased steadily in any */
  PROBE_STUCK,          /* never increased in any of the attempts */
  PROBE_FALLBACK,       /* default-zero: the last report, not probed */
  PROBE_NOT_BUILT,      /* in libcpucycles' list for this ISA, but not
                           built into this library (no setup): never run */
  PROBE_NOT_TRIED       /* may fault here, and its fault could not be
                           caught (catch says why): not run, or run only
                           as far as setup's questions */
};

enum probe_stage {
  PROBE_IN_SETUP,       /* setup (and the scaling check after it) */
  PROBE_IN_READS        /* the sampling reads */
};

struct probe_report {
  int index;            /* in the table; count for default-zero */
  const char *name;
  enum probe_outcome outcome;
  enum probe_stage stage;    /* where it stopped (PROBE_CRASHED) */
  struct counter_info info;  /* as setup described it (refusal included) */
  long long persecond;       /* the estimate it was judged against */
  double ratio;              /* persecond / info.frequency, 0 when no
                                frequency; for a timer of unknown rate
                                (info.rate_unknown), the first measured
                                cycles per tick, 0 when none */
  double scaling;            /* cycles per tick, 0 where none was found */
  long long precision;       /* cycles, penalty and bump included; 0
                                unless works */
  long long bump;            /* of the precision, the order bump: 10 for
                                each counter before it that works */
  int signal;                /* the crash signal, 0 when none */
  struct catch_status catch; /* PROBE_NOT_TRIED: why catching was not
                                possible (its signal, where one) */
  int backwards;             /* attempts whose reads went backwards */
  int attempts;              /* sampling attempts made */
};

/* Called once per counter of the table, in the table's order, then once
 * for default-zero (index = count, outcome PROBE_FALLBACK, precision and
 * scaling 0): libcpucycles' trace.  arg is cpucycles_select's report_arg.
 * The report lives only during the call. */
typedef void select_report_fn(const struct probe_report *report, void *arg);

/* Who watches the library's own first call, for cpucycles-info
 * --explain and --json, which link the library's code (not the shared
 * library) and so hold one probe: the frequency sources under root (""
 * for the system) and each counter's report, as the trace sees them. */
struct probe_observer {
  const char *root;
  persecond_report_fn *source;
  select_report_fn *counter;
  void *arg;
};

/* Set before the first call (lib/cpucycles.c); *o must outlive it. */
void cpucycles_probe_observe(const struct probe_observer *o);

/* Probe table[0..count-1] and store the best counter in *best.
 *
 * report, when not NULL, is the trace: every counter is reported as
 * above.  When name is "default-zero", default-zero is chosen and nothing
 * is probed (unless tracing).  When name names a counter of the table that
 * works, that counter is chosen; without trace the others are not even
 * probed.  When name is unknown, or its counter fails, the whole table is
 * probed as if name were NULL.
 *
 * With trace, every counter of the table is measured and traced, whatever
 * name says, and the choice is the same as without.  Counters not chosen
 * are released.  Returns the index of the chosen counter, or -1 when
 * default-zero was chosen. */
int cpucycles_select(const struct counter *const *table, int count,
                     long long persecond, const char *name,
                     select_report_fn *report, void *report_arg,
                     struct choice *best);

/* Cycles per tick for a counter of this description, or -1 when the
 * counter must be dropped because its frequency does not fit persecond
 * (cpucycles_multiplier_of). */
double cpucycles_scaling_of(const struct counter_info *info, long long persecond);

/* The penalty in cycles for a counter of this description (its kind,
 * rate and width), libcpucycles' for the same counter. */
long long cpucycles_penalty_of(const struct counter_info *info);

#endif
