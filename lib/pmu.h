/* pmu.h: the core PMUs of a Linux machine, as sysfs lists them, so that
 * the perf counters open a cycles event on each core type of a hybrid CPU
 * (cpu_core and cpu_atom, Arm big.LITTLE, Apple's clusters); see
 * doc/perf-counters.md.  A core PMU is a directory under
 * /sys/bus/event_source/devices with a `type` and a non-empty `cpus`
 * (perf(1)'s test): one on a single-type Arm, none on x86 unless hybrid.
 * No heap, no stdio. */
#ifndef CPUCYCLES_PMU_H
#define CPUCYCLES_PMU_H

/* At most this many events per thread (hybrid CPUs have 2 or 3 types). */
#define CPUCYCLES_PMU_MAX 4

struct cpucycles_pmu {
  char name[48];           /* the directory's: cpu_core, cpu_atom, ... */
  unsigned int type;       /* its `type`: attr.type for its own events */
  int has_raw;             /* its events/ directory names a cycles event */
  unsigned long long raw;  /* that event, as attr.config with attr.type = type */
};

/* The core PMUs under ROOT/sys/bus/event_source/devices (root "": the
 * real one), up to max into pmus[] by ascending type.  How many there are
 * (maybe more than max); 0 without the directory. */
int cpucycles_pmu_discover(const char *root, struct cpucycles_pmu *pmus, int max);

/* A sysfs event ("event=0x3c,umask=0x0") as attr.config, through the
 * PMU's format/ files ("config:0-7,32-35").  0 and *config, or -1 for a
 * malformed term or a non-zero field outside attr.config. */
int cpucycles_pmu_event_config(const char *root, const char *pmu,
                               const char *event, unsigned long long *config);

#endif
