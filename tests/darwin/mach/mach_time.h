/* Declarations of <mach/mach_time.h> as the macOS and iOS SDKs have them
 * (mach_time.h, mach_types.h and kern_return.h of the SDK): just enough
 * to compile lib/counters/default-mach.c for a Darwin target on a machine
 * without the SDK (tests/check-darwin.sh).  Not a copy of the SDK: the
 * same types and prototypes, written out. */
#ifndef CPUCYCLES_TEST_MACH_TIME_H
#define CPUCYCLES_TEST_MACH_TIME_H

#include <stdint.h>

typedef int kern_return_t;

struct mach_timebase_info {
  uint32_t numer;
  uint32_t denom;
};

typedef struct mach_timebase_info *mach_timebase_info_t;
typedef struct mach_timebase_info mach_timebase_info_data_t;

kern_return_t mach_timebase_info(mach_timebase_info_t info);
uint64_t mach_absolute_time(void);

#endif
