/* tscfreq.h: the rate of the x86 time-stamp counter where the CPU states
 * it, shared by amd64-tsc, amd64-tscasm, x86-tsc and x86-tscasm (four ways
 * of reading the same counter, one way of knowing how fast it ticks).
 *
 * Internal to the library: not exported from the shared library. */
#ifndef CPUCYCLES_TSCFREQ_H
#define CPUCYCLES_TSCFREQ_H

/* One CPUID query: leaf (subleaf 0) into regs[0..3] = eax, ebx, ecx, edx. */
typedef void cpucycles_cpuid_fn(unsigned int leaf, unsigned int regs[4]);

/* The invariant TSC's ticks per second as CPUID states it, or 0 when it
 * does not: the TSC must be invariant (leaf 0x80000007, EDX bit 8) and
 * leaf 0x15 must give the TSC/crystal ratio and, directly or through the
 * processor's model, the crystal's frequency.  Pure logic over `cpuid`, so
 * that tests can feed it any CPU's answers.  A result outside 1 MHz ..
 * 100 GHz is taken for garbage (a hypervisor's, say) and gives 0. */
long long cpucycles_tsc_frequency_from(cpucycles_cpuid_fn *cpuid);

#if defined(__x86_64__) || defined(__i386__)
#define CPUCYCLES_TSCFREQ_AVAILABLE 1

struct counter_info;

/* A TSC counter's setup, before it tries the instruction: -1 with the
 * reason where the process disabled RDTSC (the kernel says so in advance:
 * lib/osclock.c), else 0 and the description: off-core, 64 bits; scaled by
 * persecond over the stated frequency, exact, when this CPU states one;
 * unscaled otherwise. */
int cpucycles_tsc_setup(struct counter_info *info);
#endif

#endif
