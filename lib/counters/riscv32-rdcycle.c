/* riscv32-rdcycle: the 64-bit cycle count of a 32-bit RISC-V CPU, read as
 * two halves with rdcycleh/rdcycle (upper half read again until it holds
 * still).  An on-core cycle counter of 64 bits.
 *
 * User access is the kernel's decision as for riscv64-rdcycle: SIGILL from
 * Linux 6.6 on unless kernel.perf_user_access is 2, which setup asks. */
#if !defined(__riscv) || __riscv_xlen != 32
#error "riscv32-rdcycle needs a 32-bit RISC-V CPU"
#endif

#include "counter.h"
#include "rdpmc.h"

static long long rdcycle_read(void)
{
  unsigned int hi, lo, again;
  do {
    __asm__ __volatile__("rdcycleh %0" : "=r"(hi));
    __asm__ __volatile__("rdcycle %0" : "=r"(lo));
    __asm__ __volatile__("rdcycleh %0" : "=r"(again));
  } while (hi != again);
  return (long long) (((unsigned long long) hi << 32) | lo);
}

/* Asks kernel.perf_user_access: 2 lets every process read the cycle CSR;
 * 0 and 1 do not (1 only beside a mapped perf event, which may be the
 * probe's and gone afterwards: a fault in the hot path).  Without the
 * sysctl (a kernel before 6.6, qemu-user) only trying tells: the reads
 * are caught. */
static int rdcycle_setup(struct counter_info *info)
{
  int access = cpucycles_perf_user_access("");
  if (access == 0 || access == 1)
    return counter_refuse(info, access == 0
                          ? "kernel.perf_user_access 0: no user-mode cycle reads"
                          : "kernel.perf_user_access 1: the cycle CSR only beside a perf event",
                          0);
  info->may_fault = access != 2;
  info->kind = COUNTER_ONCORE;
  info->frequency = 0;
  info->only32 = 0;
  return 0;
}

const struct counter cpucycles_counter_riscv32_rdcycle = {
  "riscv32-rdcycle", rdcycle_read, rdcycle_setup, 0, 0, COUNTER_ASKS
};
