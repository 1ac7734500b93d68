/* annotate.h: what valgrind's race detectors, helgrind and DRD, cannot
 * see for themselves: they model locks but not C11 atomics, and the ABI's
 * pointer cpucycles is loaded plainly (doc/security.md, "Sanitizers and
 * valgrind").  CPUCYCLES_ATOMIC turns checking off for an object accessed
 * only atomically, or that pointer, never for the state an atomic
 * publishes; CPUCYCLES_HAPPENS_BEFORE/AFTER give a release store and the
 * acquire load that saw it their order.  Valgrind client requests, none on
 * the hot path; without valgrind's headers, nothing. */
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

/* Nonzero under valgrind: asked by the first call only. */
#define CPUCYCLES_UNDER_VALGRIND (RUNNING_ON_VALGRIND != 0)
#else
#define CPUCYCLES_HAPPENS_BEFORE(p) ((void) 0)
#define CPUCYCLES_HAPPENS_AFTER(p) ((void) 0)
#define CPUCYCLES_ATOMIC(p, n) ((void) 0)
#define CPUCYCLES_UNDER_VALGRIND 0
#endif

#endif
