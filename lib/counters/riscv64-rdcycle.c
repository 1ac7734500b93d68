/* riscv64-rdcycle: the cycle CSR (0xc00) of a 64-bit RISC-V CPU, read with
 * rdcycle.  An on-core cycle counter of 64 bits.
 *
 * User mode may read it only while the kernel sets scounteren.CY.  Linux
 * did so until 6.6; from 6.6 on it does so only when the sysctl
 * kernel.perf_user_access is 2 (legacy), so by default rdcycle raises an
 * illegal-instruction trap and the kernel sends SIGILL.  Setup asks the
 * sysctl; only without it is the fault caught.  Then riscv64-perfrdcycle
 * (an event mapped by the process, which the default perf_user_access 1
 * allows) or default-perfevent takes over. */
#if !defined(__riscv) || __riscv_xlen != 64
#error "riscv64-rdcycle needs a 64-bit RISC-V CPU"
#endif

#include "counter.h"
#include "rdpmc.h"

static long long rdcycle_read(void)
{
  long long r;
  __asm__ __volatile__("rdcycle %0" : "=r"(r));
  return r;
}

/* Asks kernel.perf_user_access (rdpmc.h): refused where the kernel says
 * no, caught where there is no such setting. */
static int rdcycle_setup(struct counter_info *info)
{
  if (cpucycles_rdcycle_access(info) != 0) return -1;
  info->kind = COUNTER_ONCORE;
  info->frequency = 0;
  info->only32 = 0;
  return 0;
}

const struct counter cpucycles_counter_riscv64_rdcycle = {
  "riscv64-rdcycle", rdcycle_read, rdcycle_setup, 0, 0, COUNTER_ASKS
};
