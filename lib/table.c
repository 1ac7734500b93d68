/* libcpucycles' list for this host, in the probe's order (counter.h).
 * CPUCYCLES_COUNTER_TABLE comes from config.h: COUNTER(name) per counter
 * built, NOT_BUILT(name, "name") per counter not, '-' turned into '_'. */
#include "counter.h"

#define COUNTER(name) extern const struct counter cpucycles_counter_##name;
#define NOT_BUILT(name, text) \
  static const struct counter not_built_##name = { text, 0, 0, 0, 0, COUNTER_TRIES };
CPUCYCLES_COUNTER_TABLE
#undef COUNTER
#undef NOT_BUILT

#define COUNTER(name) &cpucycles_counter_##name,
#define NOT_BUILT(name, text) &not_built_##name,
const struct counter *const cpucycles_counter_table[] = {
  CPUCYCLES_COUNTER_TABLE
  0
};
#undef COUNTER
#undef NOT_BUILT

const int cpucycles_counter_count =
  (int) (sizeof cpucycles_counter_table / sizeof cpucycles_counter_table[0]) - 1;
