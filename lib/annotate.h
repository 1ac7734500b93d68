/* annotate.h: what valgrind's race detectors, helgrind and DRD, cannot
 * see for themselves.
 *
 * They model locks but not C11 atomics: the first call's publication (a
 * release store, read with acquire loads) looks to them like unordered
 * plain accesses, and the public pointer cpucycles is a plain pointer by
 * the ABI, loaded by callers without any atomic at all.  Without these
 * annotations every program that uses the library gets reports about it
 * (helgrind 6, DRD over 1000 on a client whose threads race into the
 * first call), none of them about the program.
 *
 * Where valgrind's headers were found at build time, each annotation is a
 * client request: a few instructions that do nothing outside valgrind.
 * None is on the hot path: the state a counter's read uses is marked once,
 * when the first call publishes it.  Elsewhere they compile to nothing.
 *
 * Internal to the library. */
#ifndef CPUCYCLES_ANNOTATE_H
#define CPUCYCLES_ANNOTATE_H

#if defined(HAVE_VALGRIND_HELGRIND_H) && defined(HAVE_VALGRIND_DRD_H)
#include <valgrind/helgrind.h>
#include <valgrind/drd.h>

/* Everything this thread did before CPUCYCLES_HAPPENS_BEFORE(p) happens
 * before what any thread does after a CPUCYCLES_HAPPENS_AFTER(p) that
 * follows it (a release store and an acquire load that saw it). */
#define CPUCYCLES_HAPPENS_BEFORE(p)                                           \
  do {                                                                        \
    ANNOTATE_HAPPENS_BEFORE(p);                                               \
    VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__DRD_ANNOTATE_HAPPENS_BEFORE,  \
                                    (p), 0, 0, 0, 0);                         \
  } while (0)
#define CPUCYCLES_HAPPENS_AFTER(p)                                            \
  do {                                                                        \
    ANNOTATE_HAPPENS_AFTER(p);                                                \
    VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__DRD_ANNOTATE_HAPPENS_AFTER,   \
                                    (p), 0, 0, 0, 0);                         \
  } while (0)

/* [p, p + n) is written by the first call before it publishes the chosen
 * counter (or is an atomic), and read from then on by every thread
 * without any synchronisation the tools can see: a thread that loads the
 * published pointer cpucycles and calls it.  Not checked from here on. */
#define CPUCYCLES_PUBLISHED(p, n)                                             \
  do {                                                                        \
    VALGRIND_HG_DISABLE_CHECKING((p), (n));                                   \
    VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__DRD_START_SUPPRESSION,        \
                                    (p), (n), 0, 0, 0);                       \
  } while (0)
#else
#define CPUCYCLES_HAPPENS_BEFORE(p) ((void) 0)
#define CPUCYCLES_HAPPENS_AFTER(p) ((void) 0)
#define CPUCYCLES_PUBLISHED(p, n) ((void) 0)
#endif

#endif
