/* rdpmc.h: whether Linux lets every process execute RDPMC on x86, as its
 * sysfs switch says, so that the raw amd64-pmcff counter is tried only
 * where it cannot fault (or fault later, in the hot path).
 *
 * Internal to the library: not exported from the shared library. */
#ifndef CPUCYCLES_RDPMC_H
#define CPUCYCLES_RDPMC_H

/* The core PMUs' rdpmc files under ROOT/sys/bus/event_source/devices
 * (cpu; cpu_core and cpu_atom on hybrid Intel processors): 0 never, 1
 * (Linux's default) only while the process has a perf event mapped, 2
 * always.  Returns 2 when every one present says 2, 1 when one says
 * anything else (unreadable or malformed included), and 0 when there is
 * none (no PMU driver, not Linux): then only trying tells. */
int cpucycles_rdpmc_switch(const char *root);

#endif
