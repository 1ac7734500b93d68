/* perf-registry.h: perf-registry.c, above an event's open and close
 * (perf-event.h), which it serialises and lists; below perf.h. */
#ifndef CPUCYCLES_PERF_REGISTRY_H
#define CPUCYCLES_PERF_REGISTRY_H

#include "perf-event.h" /* first: config.h, _GNU_SOURCE */

#ifdef CPUCYCLES_PERF_AVAILABLE

/* Open a cycles event for the calling thread into ev, closing what ev
 * held (cpucycles_perf_event_open, under the lock), and list it for
 * closing: 0, or -1 with ev UNOPENED (EDEADLK in a signal handler whose
 * thread holds the lock). */
int cpucycles_perf_open(struct cpucycles_perf_event *ev, int map_page,
                        unsigned long long config1);

/* A thread's first use of ev: open it, or make it FALLBACK if refused, so
 * the open is tried once per thread.  1 when this call opened ev. */
int cpucycles_perf_open_once(struct cpucycles_perf_event *ev, int map_page,
                             unsigned long long config1);

/* Unmap, close, forget: UNOPENED.  Safe on any event. */
void cpucycles_perf_close(struct cpucycles_perf_event *ev);

/* Whether an event was ever linked: until then paths that would only
 * close one touch no thread-local (they may allocate: doc/security.md). */
int cpucycles_perf_ever_linked(void);

/* The library's fork handlers' part: prepare holds the registry across
 * fork(), so that the child can close every inherited descriptor and
 * forget the pages (VM_DONTCOPY). */
void cpucycles_perf_fork_prepare(void);
void cpucycles_perf_fork_parent(void);
void cpucycles_perf_fork_child(void);

/* A counter's atfork_child: the same, and ev UNOPENED. */
void cpucycles_perf_atfork_child(struct cpucycles_perf_event *ev);

/* How many core PMUs the process's first successful open found (-1
 * before it), the first max copied to pmus (may be NULL): cpucycles-info
 * reports these rather than looking again. */
int cpucycles_perf_core_pmus(struct cpucycles_pmu *pmus, int max);

#endif /* CPUCYCLES_PERF_AVAILABLE */

#endif
