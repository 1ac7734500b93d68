/* arm64-pmc: PMCCNTR_EL0, the 64-bit cycle counter of the ARMv8 PMU.  User
 * mode may read it only when the kernel set PMUSERENR_EL0.EN (or .CR),
 * which stock Linux does not: the mrs traps (SIGILL, caught by the probe).
 * It counts only when PMCR_EL0.E and PMCNTENSET_EL0.C are set, else the
 * probe drops the still reads; PMCR_EL0.D (every 64th cycle) shows as a
 * coarse step, not a wrong rate. */
#if !defined(__aarch64__)
#error "arm64-pmc needs an ARMv8 CPU in AArch64 state"
#endif

#include "counter.h"

static long long pmc_read(void)
{
  long long r;
  __asm__ __volatile__("mrs %0, PMCCNTR_EL0" : "=r"(r));
  return r;
}

static int pmc_setup(struct counter_info *info)
{
  pmc_read(); /* SIGILL here when PMUSERENR_EL0 forbids user access */
  return counter_accept(info, COUNTER_ONCORE, 0, 0);
}

const struct counter cpucycles_counter_arm64_pmc = {
  "arm64-pmc", pmc_read, pmc_setup, 0, 0, COUNTER_TRIES
};
