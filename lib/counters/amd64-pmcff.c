/* amd64-pmcff: RDPMC of fixed-function performance counter 1 (ecx =
 * 1<<30 | 1), which on Intel CPUs counts unhalted core cycles, with no
 * perf event at all: one instruction, the cheapest read there is.
 *
 * It is libcpucycles' counter of that name and works where that one does:
 * when the kernel lets every process execute RDPMC (Linux's sysfs switch
 * /sys/bus/event_source/devices/cpu/rdpmc = 2, which cpucycles-open sets)
 * and someone has the fixed counter counting (the kernel's NMI watchdog,
 * a perf session, or a BIOS).  The count is the core's, not the thread's:
 * it includes other threads and the kernel, and a migration to another
 * core jumps to that core's count, which the caller's medians absorb.
 *
 * Setup asks the sysfs switch first and does not try the instruction
 * unless it says 2 (or does not exist: no PMU driver, nothing to ask):
 * under 1, RDPMC works only while some perf event is mapped, which may be
 * true during the probe and false afterwards, a fault in the hot path.
 * Where the switch allows it, a fault (AMD processors have no fixed
 * counters) is caught by the probe; a fixed counter that nobody
 * programmed stands still, and the probe drops it for not increasing.
 * amd64-perfpmcff is the same read with a perf event of the thread's own
 * behind it (doc/perf-counters.md). */
#if !defined(__x86_64__) || !defined(__linux__)
#error "amd64-pmcff needs Linux on an x86-64 CPU"
#endif

#include <x86intrin.h> /* __rdpmc: the rdpmc instruction, edx:eax */
#include "counter.h"
#include "rdpmc.h"

#define FIXED_CYCLES (1 << 30 | 1)

static long long pmcff_read(void)
{
  return (long long) __rdpmc(FIXED_CYCLES);
}

static int pmcff_setup(struct counter_info *info)
{
  if (cpucycles_rdpmc_switch("") == 1)
    return counter_refuse(info, CPUCYCLES_REFUSAL_RDPMC_SWITCH, 0);
  pmcff_read(); /* faults here when RDPMC or the fixed counter is refused */
  info->kind = COUNTER_ONCORE;
  info->frequency = 0;
  info->only32 = 0;
  return 0;
}

const struct counter cpucycles_counter_amd64_pmcff = {
  "amd64-pmcff", pmcff_read, pmcff_setup, 0, 0
};
