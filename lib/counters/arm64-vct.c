/* arm64-vct: CNTVCT_EL0, the ARMv8 generic timer's virtual count, scaled
 * by the CPU frequency over CNTFRQ_EL0.  Firmware programs CNTFRQ_EL0
 * unchecked: outside 1 MHz..10 GHz (common: 19.2, 24, 25, 50, 100 MHz,
 * 1 GHz from ARMv8.6) is refused, 0 leaves the rate to the probe's
 * measured multiplier.  Linux and macOS set CNTKCTL_EL1.EL0VCTEN;
 * elsewhere a trap is caught.  The isb keeps the read from being taken
 * early, as in the kernel's __arch_counter_get_cntvct(). */
#if !defined(__aarch64__)
#error "arm64-vct needs an ARMv8 CPU in AArch64 state"
#endif

#include "counter.h"

#define VCT_MIN_HZ 1000000LL
#define VCT_MAX_HZ 10000000000LL

static long long vct_read(void)
{
  long long r;
  __asm__ __volatile__("isb; mrs %0, CNTVCT_EL0" : "=r"(r) :: "memory");
  return r;
}

static long long vct_frequency(void)
{
  long long f;
  __asm__ __volatile__("mrs %0, CNTFRQ_EL0" : "=r"(f));
  return f & 0xffffffffLL; /* bits 63:32 are RES0 */
}

static int vct_setup(struct counter_info *info)
{
  long long f = vct_frequency();
  if (f != 0 && (f < VCT_MIN_HZ || f > VCT_MAX_HZ))
    return counter_refuse(info, "CNTFRQ_EL0 holds an implausible frequency", 0);
  info->rate_unknown = f == 0;
  return counter_accept(info, COUNTER_OFFCORE, f, 0);
}

const struct counter cpucycles_counter_arm64_vct = {
  "arm64-vct", vct_read, vct_setup, 0, 0
#if defined(__linux__) || defined(__APPLE__)
  , COUNTER_ASKS
#endif
};
