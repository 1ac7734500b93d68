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

/* One instruction each, its result returned: an analyser that does not see
 * an asm statement's outputs written (cppcheck) sees no variable read
 * before it is set. */
static inline unsigned int rdcycleh(void)
{
  unsigned int r;
  __asm__ __volatile__("rdcycleh %0" : "=r"(r));
  return r;
}

static inline unsigned int rdcycle(void)
{
  unsigned int r;
  __asm__ __volatile__("rdcycle %0" : "=r"(r));
  return r;
}

static long long rdcycle_read(void)
{
  unsigned int hi, lo;
  do {
    hi = rdcycleh();
    lo = rdcycle();
  } while (hi != rdcycleh());
  return (long long) (((unsigned long long) hi << 32) | lo);
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

const struct counter cpucycles_counter_riscv32_rdcycle = {
  "riscv32-rdcycle", rdcycle_read, rdcycle_setup, 0, 0, COUNTER_ASKS
};
