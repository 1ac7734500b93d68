/* cpucycles-open's logic, apart from its command line so that tests can
 * run it against a fixture tree with chosen privileges and a chosen
 * architecture.  See cpucycles-open(1). */
#ifndef CPUCYCLES_OPEN_COUNTERS_H
#define CPUCYCLES_OPEN_COUNTERS_H

#include <stddef.h>
#include <stdio.h>

/* Which notes apply: what cannot be enabled from user space differs. */
enum open_arch {
  OPEN_ARCH_OTHER,
  OPEN_ARCH_X86,
  OPEN_ARCH_ARM32,
  OPEN_ARCH_ARM64,
  OPEN_ARCH_RISCV
};

/* How a value is written: the real one opens the file and writes text
 * (len bytes, a number and a newline) in one write(2).  Returns 0 or an
 * errno value.  Tests replace it to make a write fail or store something
 * else. */
typedef int open_writer(const char *path, const char *text, size_t len);

int open_counters_write_file(const char *path, const char *text, size_t len);

struct open_config {
  const char *root;     /* prefixed to every path; "" for the real system */
  int dry_run;          /* read and report, write nothing */
  int privileged;       /* effective user ID 0 */
  enum open_arch arch;
  open_writer *write;   /* 0: open_counters_write_file */
};

/* Reads each setting, changes those that do not allow user-space
 * counters, reads each change back, and reports on out (what it did) and
 * err (what failed).  Returns the exit status: 0 when every setting that
 * exists allows the counters now (or would, in a dry run), 1 otherwise or
 * when a real run is not privileged (then nothing is read or written). */
int open_counters_run(const struct open_config *config, FILE *out, FILE *err);

#endif
