/* tscfreq.h: the x86 TSC's rate where the CPU states it, and the setup
 * shared by amd64-tsc, amd64-tscasm, x86-tsc and x86-tscasm. */
#ifndef CPUCYCLES_TSCFREQ_H
#define CPUCYCLES_TSCFREQ_H

/* One CPUID query: leaf (subleaf 0) into regs[0..3] = eax, ebx, ecx, edx. */
typedef void cpucycles_cpuid_fn(unsigned int leaf, unsigned int regs[4]);

/* The invariant TSC's ticks per second as CPUID states it (leaves
 * 0x80000007 and 0x15, the crystal by model where 0x15 omits it), or 0;
 * a result outside 1 MHz .. 100 GHz is garbage (a hypervisor's, say).
 * Pure logic over `cpuid`, so that tests can feed it any CPU's answers. */
long long cpucycles_tsc_frequency_from(cpucycles_cpuid_fn *cpuid);

#if defined(__x86_64__) || defined(__i386__)
#define CPUCYCLES_TSCFREQ_AVAILABLE 1

struct counter_info;

/* A TSC counter's setup (COUNTER_ASKS: runs no RDTSC): -1 where the
 * process disabled RDTSC (osclock.h), else off-core, 64 bits, scaled by
 * persecond over the stated frequency, exact, where CPUID states one. */
int cpucycles_tsc_setup(struct counter_info *info);
#endif

#endif
