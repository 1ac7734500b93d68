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

/* Called once per counter of the table, in the table's order, then once
 * for default-zero (n = count): the values of libcpucycles' trace line.
 * precision is 0 for a counter that was dropped (libcpucycles' meaning),
 * scaling is 0 where none was found. */
typedef void select_trace_fn(int n, const char *name, long long precision,
                             double scaling, int only32);

/* Probe table[0..count-1] and store the best counter in *best.
 *
 * When name is "default-zero", default-zero is chosen and nothing is
 * probed (unless tracing).  When name names a counter of the table that
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
                     select_trace_fn *trace, struct choice *best);

/* Cycles per tick for a counter of this description, or -1 when the
 * counter must be dropped because its frequency does not fit persecond. */
double cpucycles_scaling_of(const struct counter_info *info, long long persecond);

/* The penalty in cycles for a counter of this kind. */
long long cpucycles_penalty_of(enum counter_kind kind);

#endif
