/* riscv32-rdcycle: the 64-bit cycle count of a 32-bit RISC-V CPU, read as
 * rdcycleh/rdcycle until the upper half holds still.  User access as for
 * riscv64-rdcycle. */
#if !defined(__riscv) || __riscv_xlen != 32
#error "riscv32-rdcycle needs a 32-bit RISC-V CPU"
#endif

#include "counter.h"
#include "rdpmc.h"

/* One instruction each, its result returned: cppcheck does not see an
 * asm statement's outputs written. */
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

const struct counter cpucycles_counter_riscv32_rdcycle = {
  "riscv32-rdcycle", rdcycle_read, cpucycles_rdcycle_setup, 0, 0, COUNTER_ASKS
};
