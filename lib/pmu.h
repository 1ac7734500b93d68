/* pmu.h: the core PMUs of a Linux machine, as sysfs lists them, so that
 * the perf counters can open a cycles event on each core type of a hybrid
 * CPU (Intel's cpu_core and cpu_atom, Arm big.LITTLE clusters, Apple's
 * clusters under Linux).  See doc/perf-counters.md.
 *
 * A core PMU is a directory under /sys/bus/event_source/devices that has
 * a `type` file (the perf type of its events) and a non-empty `cpus` file
 * (the CPUs it counts on): the test perf(1) itself uses.  A machine with
 * one core type has one such PMU (Arm) or none (x86's `cpu` has no `cpus`
 * file unless the CPU is hybrid).
 *
 * No heap, no stdio: getdents64 and read(2) into buffers on the stack.
 * Internal to the library: not exported from the shared library. */
#ifndef CPUCYCLES_PMU_H
#define CPUCYCLES_PMU_H

/* How many core PMUs a thread opens an event on, at most.  Hybrid CPUs
 * have two or three core types today. */
#define CPUCYCLES_PMU_MAX 4

struct cpucycles_pmu {
  char name[48];           /* the directory's name: cpu_core, cpu_atom, ... */
  unsigned int type;       /* its `type`: attr.type for its own events */
  int has_raw;             /* its events/ directory names a cycles event */
  unsigned long long raw;  /* that event, as attr.config with attr.type = type */
};

/* The core PMUs under ROOT/sys/bus/event_source/devices (root "" or NULL:
 * the real system), up to max of them into pmus[], in ascending order of
 * type.  Returns how many there are, which may be more than max; 0 when
 * the directory cannot be read (not Linux, no sysfs). */
int cpucycles_pmu_discover(const char *root, struct cpucycles_pmu *pmus, int max);

/* A sysfs event description ("event=0x3c", "event=0x11,umask=0x0") as
 * attr.config, by the PMU's format/ files under ROOT/.../devices/PMU
 * ("config:0-7", "config:0-7,32-35").  Returns 0 and *config, or -1 when
 * a term is malformed or names a non-zero field outside attr.config. */
int cpucycles_pmu_event_config(const char *root, const char *pmu,
                               const char *event, unsigned long long *config);

#endif
