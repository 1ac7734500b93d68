/* The multiplier's clock, alone: test builds link tests/seams.c instead. */
#include "adapters.h"
#include "multiplier.h"

long long (*const cpucycles_multiplier_clock)(void) = cpucycles_clock_usec;
