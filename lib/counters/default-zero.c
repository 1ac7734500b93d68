/* default-zero: 0, when every other counter failed: cpucycles() never
 * fails, and cpucycles_implementation() says so. */
#include "counter.h"

static long long zero_read(void)
{
  return 0;
}

static int zero_setup(struct counter_info *info)
{
  return counter_accept(info, COUNTER_OSCLOCK, 0, 0);
}

const struct counter cpucycles_counter_default_zero = {
  "default-zero", zero_read, zero_setup, 0, 0, COUNTER_ASKS
};
