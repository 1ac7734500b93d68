/* multiplier-sys.c: the clock the multiplier measurement reads
 * (multiplier.h), and nothing else: test builds link tests/seams.c in
 * place of this file. */
#include "adapters.h"
#include "multiplier.h"

long long (*const cpucycles_multiplier_clock)(void) = cpucycles_clock_usec;
