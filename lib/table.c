/* The counters configure found compiling for this host, in the order the
 * probe tries them (which decides ties).  CPUCYCLES_COUNTER_TABLE comes from
 * config.h: one COUNTER(name) per counter, names with '-' turned into '_'. */
#include "counter.h"

#define COUNTER(name) extern const struct counter cpucycles_counter_##name;
CPUCYCLES_COUNTER_TABLE
#undef COUNTER

#define COUNTER(name) &cpucycles_counter_##name,
const struct counter *const cpucycles_counter_table[] = {
  CPUCYCLES_COUNTER_TABLE
  0
};
#undef COUNTER

const int cpucycles_counter_count =
  (int) (sizeof cpucycles_counter_table / sizeof cpucycles_counter_table[0]) - 1;
