/* A loadable module holding the library's perf event code (lib/perf.c,
 * through libcpucycles-core), for test-unload: it opens a per-thread event
 * through the opener seam, with a descriptor of /dev/null standing for the
 * event, so that dlclose() while events are open can be tried on any
 * machine, with or without a PMU. */
#include <config.h>
#include <fcntl.h>
#include "seams.h"

#ifdef CPUCYCLES_PERF_AVAILABLE

static __thread struct cpucycles_perf_event event;

static int null_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                     int group_fd, unsigned long flags)
{
  (void) attr; (void) pid; (void) cpu; (void) group_fd; (void) flags;
  return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* Opens the calling thread's event: 0, or -1. */
__attribute__((visibility("default"))) int unload_plugin_open_event(void);
__attribute__((visibility("default"))) int unload_plugin_open_event(void)
{
  cpucycles_perf_set_opener(null_open);
  return cpucycles_perf_open(&event, 0, 0);
}

#else

__attribute__((visibility("default"))) int unload_plugin_open_event(void)
{
  return -1;
}

#endif

/* This copy's crash-signal catcher (lib/works.c), for test-unload's two
 * copies of the library in one process: 0, or -1. */
#ifndef _WIN32
#include "counter.h"

__attribute__((visibility("default"))) int unload_plugin_catch_arm(void);
__attribute__((visibility("default"))) int unload_plugin_catch_arm(void)
{
  return cpucycles_catch_arm(0);
}

__attribute__((visibility("default"))) void unload_plugin_catch_disarm(void);
__attribute__((visibility("default"))) void unload_plugin_catch_disarm(void)
{
  cpucycles_catch_disarm();
}
#endif
