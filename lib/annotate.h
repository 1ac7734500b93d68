/* annotate.h: what valgrind's race detectors, helgrind and DRD, cannot
 * see for themselves.
 *
 * They model locks but not C11 atomics: an atomic object read and written
 * by several threads looks to them like a race, and the first call's
 * publication (a release store, read with acquire loads) like unordered
 * plain accesses to everything it published.  The public pointer
 * cpucycles is a plain pointer by the ABI, loaded by callers without any
 * atomic at all.  Unannotated, a client whose threads race into the first
 * call gets reports about the library (helgrind 5, DRD 1005 with the
 * probe's choice; 12 and 8005 with a scaled counter), none about itself.
 *
 * So the tools are told two different things:
 *  - CPUCYCLES_ATOMIC: checking off for an object that the library only
 *    ever accesses with atomic operations (it cannot race), or that is
 *    the ABI's pointer, which the program loads plainly.  Never for the
 *    state an atomic publishes: that stays checked.
 *  - CPUCYCLES_HAPPENS_BEFORE/AFTER: the order a release store and the
 *    acquire load that saw it give everything published through them.
 *    A write to published state after the release store, or a read
 *    before the acquire load, is still reported (the test-only race
 *    build, -DCPUCYCLES_TEST_RACE, checks that: tests/check-sanitizers.sh).
 *
 * Where valgrind's headers were found at build time, each annotation is a
 * client request: a few instructions that do nothing outside valgrind.
 * None is on the hot path: the first call makes them, and the entry
 * points other than cpucycles(); a read that needs a happens-after is
 * published in an annotated twin only when the first call finds itself
 * under valgrind (CPUCYCLES_UNDER_VALGRIND), the plain read otherwise.
 * Without the headers they compile to nothing.
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

/* [p, p + n) is an atomic object (or the ABI's pointer): not checked
 * from here on. */
#define CPUCYCLES_ATOMIC(p, n)                                                \
  do {                                                                        \
    VALGRIND_HG_DISABLE_CHECKING((p), (n));                                   \
    VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__DRD_START_SUPPRESSION,        \
                                    (p), (n), 0, 0, 0);                       \
  } while (0)

/* Nonzero when the program runs under valgrind: asked by the first call
 * only. */
#define CPUCYCLES_UNDER_VALGRIND (RUNNING_ON_VALGRIND != 0)
#else
#define CPUCYCLES_HAPPENS_BEFORE(p) ((void) 0)
#define CPUCYCLES_HAPPENS_AFTER(p) ((void) 0)
#define CPUCYCLES_ATOMIC(p, n) ((void) 0)
#define CPUCYCLES_UNDER_VALGRIND 0
#endif

#endif
