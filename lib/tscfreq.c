/* The x86 time-stamp counter's rate, from CPUID (tscfreq.h).
 *
 * Intel SDM vol. 3, "Time-Stamp Counter" and "Determining the Processor
 * Base Frequency"; vol. 2, CPUID leaves 15H and 80000007H.  Leaf 0x15
 * gives EAX = denominator and EBX = numerator of the TSC/crystal ratio and
 * ECX = the crystal's frequency in Hz, or 0: the manual then names the
 * crystal by model (crystal_by_model).  AMD processors do not implement
 * leaf 0x15 (it reads as zeros): their TSC stays unscaled. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "counter.h"
#include "osclock.h"
#include "tscfreq.h"

#define LEAF_VENDOR 0x0u
#define LEAF_SIGNATURE 0x1u
#define LEAF_TSC_CRYSTAL 0x15u
#define LEAF_EXTENDED_MAX 0x80000000u
#define LEAF_POWER_MANAGEMENT 0x80000007u
#define INVARIANT_TSC (1u << 8) /* leaf 0x80000007, EDX */
#define TSC_PRESENT (1u << 4)   /* leaf 1, EDX */

#define TSC_MIN_HZ 1000000ULL
#define TSC_MAX_HZ 100000000000ULL

/* "GenuineIntel" in EBX, EDX, ECX of leaf 0. */
static int is_intel(const unsigned int vendor[4])
{
  return vendor[1] == 0x756e6547u && vendor[3] == 0x49656e69u
      && vendor[2] == 0x6c65746eu;
}

/* The crystal of the Intel processors whose leaf 0x15 leaves ECX 0, by
 * family 6 display model; 0 for any other processor. */
static long long crystal_by_model(unsigned int signature)
{
  unsigned int family = (signature >> 8) & 0xfu;
  unsigned int model = ((signature >> 4) & 0xfu) | ((signature >> 12) & 0xf0u);
  if (family != 6) return 0;
  switch (model) {
    case 0x4e: case 0x5e:            /* Skylake client */
    case 0x8e: case 0x9e:            /* Kaby Lake, Coffee Lake, Whiskey Lake */
    case 0xa5: case 0xa6:            /* Comet Lake */
      return 24000000;
    case 0x55:                       /* Xeon Scalable (Skylake-SP, Cascade Lake) */
      return 25000000;
    case 0x5c:                       /* Goldmont */
      return 19200000;
  }
  return 0;
}

/* The leaves in the order that stops soonest without the rate (AMD: 0 and
 * 0x15 only): in a virtual machine each CPUID costs microseconds. */
long long cpucycles_tsc_frequency_from(cpucycles_cpuid_fn *cpuid)
{
  unsigned int vendor[4], regs[4];
  unsigned long long crystal, numerator, denominator, hz;
  cpuid(LEAF_VENDOR, vendor);
  if (vendor[0] < LEAF_TSC_CRYSTAL) return 0;
  cpuid(LEAF_TSC_CRYSTAL, regs);
  denominator = regs[0];
  numerator = regs[1];
  crystal = regs[2];
  if (denominator == 0 || numerator == 0) return 0;
  cpuid(LEAF_EXTENDED_MAX, regs);
  if (regs[0] < LEAF_POWER_MANAGEMENT) return 0;
  cpuid(LEAF_POWER_MANAGEMENT, regs);
  if (!(regs[3] & INVARIANT_TSC)) return 0;
  if (crystal == 0 && is_intel(vendor)) {
    cpuid(LEAF_SIGNATURE, regs);
    crystal = (unsigned long long) crystal_by_model(regs[0]);
  }
  if (crystal == 0) return 0;
  /* 32-bit factors: the product fits 64 bits. */
  hz = crystal * numerator / denominator;
  if (hz < TSC_MIN_HZ || hz > TSC_MAX_HZ) return 0;
  return (long long) hz;
}

#ifdef CPUCYCLES_TSCFREQ_AVAILABLE
#include <cpuid.h>

static void cpuid_instruction(unsigned int leaf, unsigned int regs[4])
{
  __cpuid_count(leaf, 0, regs[0], regs[1], regs[2], regs[3]);
}

/* Asked once for all four TSC counters: -1 until then.  Every thread
 * computes the same value: a relaxed store is enough. */
static long long tsc_hz = -1;
#ifdef __i386__
static int tsc_present = -1; /* likewise: CPUID's TSC bit */
#endif

int cpucycles_tsc_setup(struct counter_info *info)
{
  long long hz;
  enum cpucycles_rdtsc state = cpucycles_rdtsc_state();
  if (state == CPUCYCLES_RDTSC_FAULTS)
    return counter_refuse(info, "RDTSC disabled for this process (prctl PR_SET_TSC)", 0);
#ifdef __i386__
  /* CPUID's TSC bit, asked once: where it is clear, a hypervisor may only
   * hide a TSC that works (libcpucycles simply tries RDTSC), and a CPU
   * before the Pentium faults: the reads are tried under the catcher. */
  if (__atomic_load_n(&tsc_present, __ATOMIC_RELAXED) < 0) {
    unsigned int regs[4];
    cpuid_instruction(LEAF_SIGNATURE, regs);
    __atomic_store_n(&tsc_present, (regs[3] & TSC_PRESENT) != 0, __ATOMIC_RELAXED);
  }
#endif
  hz = __atomic_load_n(&tsc_hz, __ATOMIC_RELAXED);
  if (hz < 0) {
    hz = cpucycles_tsc_frequency_from(cpuid_instruction);
    __atomic_store_n(&tsc_hz, hz, __ATOMIC_RELAXED);
  }
  info->frequency_exact = hz > 0;
  /* PR_GET_TSC refused (a sandbox's filter): the reads may fault */
  info->may_fault = state != CPUCYCLES_RDTSC_ALLOWED;
#ifdef __i386__
  if (!__atomic_load_n(&tsc_present, __ATOMIC_RELAXED)) info->may_fault = 1;
#endif
  return counter_accept(info, COUNTER_OFFCORE, hz, 0);
}
#endif
