/* The probe: which compiled-in counter this machine should use.
 * Pure logic over a table of counters, so that tests can feed it fakes. */
#ifndef CPUCYCLES_SELECT_H
#define CPUCYCLES_SELECT_H

#include "counter.h"

#define SELECT_SAMPLES 1000  /* reads per attempt */
#define SELECT_ATTEMPTS 10   /* attempts before a counter is dropped */

struct choice {
  const struct counter *counter; /* never NULL: default-zero at worst */
  struct counter_info info;
  double scaling;                /* cycles per tick */
  long long precision;           /* in cycles, penalty included */
};

/* Called once per counter tried; precision is -1 for a dropped counter. */
typedef void select_trace_fn(int n, const char *name, long long precision,
                             double scaling, int only32);

/* Probe table[0..count-1] and store the best counter in *best.  When name
 * is not NULL and names a counter of the table that works, that counter is
 * chosen without probing the others; otherwise the whole table is probed.
 * Counters not chosen are released.  Returns the index of the chosen
 * counter, or -1 when every counter failed and default-zero was chosen. */
int cpucycles_select(const struct counter *const *table, int count,
                     long long persecond, const char *name,
                     select_trace_fn *trace, struct choice *best);

/* Cycles per tick for a counter of this description, or -1 when the
 * counter must be dropped because its frequency does not fit persecond. */
double cpucycles_scaling_of(const struct counter_info *info, long long persecond);

/* The penalty in cycles for a counter of this kind. */
long long cpucycles_penalty_of(enum counter_kind kind);

#endif
