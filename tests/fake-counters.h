/* Fake counters for the probe's tests: each slot is a struct counter whose
 * behaviour the test sets before calling cpucycles_select(). */
#ifndef FAKE_COUNTERS_H
#define FAKE_COUNTERS_H

#include "counter.h"

#define FAKE_SLOTS 4

enum fake_failure {
  FAKE_WORKS,
  FAKE_SETUP_REFUSES,   /* setup returns -1, with info.refusal and
                           info.refusal_errno as the reason */
  FAKE_SETUP_SIGSEGV,   /* setup stores into an inaccessible page */
  FAKE_READ_SIGILL,     /* every read raises SIGILL */
  FAKE_DECREASES,       /* reads go down in the first bad_attempts attempts */
  FAKE_NEVER_MOVES,     /* reads always return the same value */
  FAKE_WORKS_ONCE       /* setup works the first time, refuses after */
};

struct fake {
  struct counter_info info;
  enum fake_failure failure;
  int bad_attempts;          /* FAKE_DECREASES: attempts that decrease */
  long long steps[8];        /* added in turn on each read ... */
  int nsteps;                /* ... the first nsteps of them (1 after reset) */
  /* Called at every setup (reads not yet counted) and before every read,
   * when not NULL: what the test wants to look at or do meanwhile. */
  void (*hook)(struct fake *f);
  /* observed */
  long long value;
  long reads;
  int setups;
  int releases;
};

extern struct fake fakes[FAKE_SLOTS];
/* Not const: a test may make one ask (COUNTER_ASKS, with may_fault in its
 * fake's info); fakes_reset() makes them all try again. */
extern struct counter fake_counters[FAKE_SLOTS];

/* Reset every slot to a working on-core counter stepping by 1. */
void fakes_reset(void);

#endif
