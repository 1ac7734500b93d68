/* perf-internal.h: what perf.c, perf-event.c and perf-registry.c share
 * (perf.h: what the counters see; doc/perf-counters.md, "How the code is
 * shared"). */
#ifndef CPUCYCLES_PERF_INTERNAL_H
#define CPUCYCLES_PERF_INTERNAL_H

#include "perf.h"

#ifdef CPUCYCLES_PERF_AVAILABLE

#include <unistd.h>

/* perf-registry.c.  lock: 0 with the registry held; -1 in a signal
 * handler whose thread holds it already (the open fails, the close waits
 * for a later one). */
int cpucycles_perf_lock(void);
void cpucycles_perf_unlock(void);
/* Under the lock: put ev on its thread's list and the process's (-1: no
 * thread key, nobody would close it); take it off; the descriptors held. */
int cpucycles_perf_link_locked(struct cpucycles_perf_event *ev);
void cpucycles_perf_unlink_locked(struct cpucycles_perf_event *ev);
long cpucycles_perf_held_locked(void);

/* perf-event.c. */
void cpucycles_perf_close_locked(struct cpucycles_perf_event *ev);
/* Close each descriptor of an open ev that is still its own; fd -1. */
void cpucycles_perf_close_fds(struct cpucycles_perf_event *ev);
/* ev UNOPENED, every field but the lists' cleared. */
void cpucycles_perf_forget(struct cpucycles_perf_event *ev);
/* Whether event i's descriptor is still the event's: one ioctl, none
 * where the kernel gave no id. */
int cpucycles_perf_is_ours(struct cpucycles_perf_event *ev, int i);

static inline int cpucycles_perf_is_open(const struct cpucycles_perf_event *ev)
{
  return ev->state == CPUCYCLES_PERF_OPEN ||
         ev->state == CPUCYCLES_PERF_OPEN_EACH_PMU;
}

/* Event i of ev's: 0 is fd and page, then more_fd and more_page. */
static inline int *cpucycles_perf_fd_of(struct cpucycles_perf_event *ev, int i)
{
  return i == 0 ? &ev->fd : &ev->more_fd[i - 1];
}

static inline volatile struct perf_event_mmap_page **cpucycles_perf_page_of(
    struct cpucycles_perf_event *ev, int i)
{
  return i == 0 ? &ev->page : &ev->more_page[i - 1];
}

static inline size_t cpucycles_perf_page_size(void)
{
  long size = sysconf(_SC_PAGESIZE);
  return size > 0 ? (size_t) size : 4096;
}

#endif /* CPUCYCLES_PERF_AVAILABLE */

#endif
