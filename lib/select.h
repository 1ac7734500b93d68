/* The probe (doc/selection.md): pure logic over a table of counters, so
 * that tests can feed it fakes. */
#ifndef CPUCYCLES_SELECT_H
#define CPUCYCLES_SELECT_H

#include "counter.h"
#include "multiplier.h"
#include "persecond.h"

#define SELECT_SAMPLES 1000  /* reads per attempt */
#define SELECT_ATTEMPTS 10   /* attempts before a counter is dropped */

/* Why one counter was kept or dropped: the trace line, --explain, --json. */
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
  PROBE_NOT_BUILT,      /* in libcpucycles' list, not built: never run */
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
  double ratio;              /* persecond / info.frequency; rate_unknown:
                                the first measured cycles per tick; else 0 */
  double scaling;            /* cycles per tick, 0 where none was found */
  long long precision;       /* penalty and bump included; 0 unless works */
  long long bump;            /* 10 for each earlier counter that works */
  int signal;                /* the crash signal, 0 when none */
  struct catch_status catch; /* PROBE_NOT_TRIED: why not */
  struct rate_check {        /* a stated rate (Hz, 0: none) checked */
    long long stated;
    double seen;
    enum rate_verdict verdict; /* DISAGREES: info says rate_unknown */
  } rate;
  int backwards;             /* attempts whose reads went backwards */
  int attempts;              /* sampling attempts made */
};

/* Called per counter in the table's order, then for default-zero (index
 * count, PROBE_FALLBACK); the report lives only during the call. */
typedef void select_report_fn(const struct probe_report *report, void *arg);

/* Who watches the library's own first call: cpucycles-info, which links
 * the library's code and so holds one probe; root "" is the system. */
struct probe_observer {
  const char *root;
  persecond_report_fn *source;
  select_report_fn *counter;
  void *arg;
};

/* Set before the first call (lib/cpucycles.c); *o must outlive it. */
void cpucycles_probe_observe(const struct probe_observer *o);

/* Probe table[0..count-1], store the best counter in *best and return its
 * index, -1 for default-zero; the others are released.  name (the
 * override): "default-zero" or a working counter of the table is chosen,
 * an unknown or failing one ignored.  Without report nothing else is
 * probed; with report (the trace) every counter is measured and reported,
 * and the choice is the same. */
int cpucycles_select(const struct counter *const *table, int count,
                     long long persecond, const char *name,
                     select_report_fn *report, void *report_arg,
                     struct choice *best);

/* Cycles per tick, or -1 when the frequency does not fit persecond. */
double cpucycles_scaling_of(const struct counter_info *info, long long persecond);

/* libcpucycles' penalty in cycles for the same counter. */
long long cpucycles_penalty_of(const struct counter_info *info);

#endif
