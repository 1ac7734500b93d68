/* riscv64-rdcycle: the cycle CSR (0xc00), on-core, 64 bits.  User mode
 * may read it only while the kernel sets scounteren.CY: Linux did until
 * 6.6, since then only when kernel.perf_user_access is 2, which setup asks
 * (rdpmc.h); caught where there is no such setting. */
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

const struct counter cpucycles_counter_riscv64_rdcycle = {
  "riscv64-rdcycle", rdcycle_read, cpucycles_rdcycle_setup, 0, 0, COUNTER_ASKS
};
