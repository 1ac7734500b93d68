/* Code run in a child process under a seccomp filter that answers an error
 * to chosen system calls, as sandboxes and container runtimes do
 * (SECCOMP_RET_ERRNO), written with libseccomp.  tests/test-sandbox makes
 * the library's first call there. */
#ifndef CPUCYCLES_TEST_SANDBOX_H
#define CPUCYCLES_TEST_SANDBOX_H

#include <stddef.h>

/* A system call, by its name, answered with errno err without being made,
 * or, with err SANDBOX_KILL, killing the process (SIGSYS).  A name this
 * architecture does not have (open on arm64) is left out. */
struct refusal {
  const char *call;
  int err;
};
#define SANDBOX_KILL (-1)

enum sandbox_result {
  SANDBOX_DONE,        /* fn returned, the child exited 0 */
  SANDBOX_UNAVAILABLE, /* no filter could be installed: not checked */
  SANDBOX_HUNG,        /* still running after SANDBOX_DEADLINE seconds */
  SANDBOX_FAILED       /* the child died or exited non-zero */
};

/* Generous: a first call takes a millisecond or so, under sanitizers a
 * few; a hang is what this catches. */
#define SANDBOX_DEADLINE 60

/* Whether a filter can be installed here (libseccomp at build time, the
 * kernel's seccomp, not under valgrind); if not, why, in why. */
int sandbox_available(char *why, size_t size);

/* Runs prepare() (may be NULL), then installs the filter refusing the n
 * calls of refused[], then runs fn(report, size), in a fresh child.  What
 * fn wrote into report (NUL-terminated) comes back in report; for a child
 * that hung or died, report says so. */
enum sandbox_result sandbox_run(const struct refusal *refused, int n,
                                void (*prepare)(void),
                                void (*fn)(char *report, size_t size),
                                char *report, size_t size);

#endif
