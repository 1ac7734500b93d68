/* cpucycles-info --explain and --json: the reports of the library's own
 * probe (the tool links the library's code, lib/libcpucycles-core.la and
 * lib/cpucycles.c, and watches its first call), which the library collects
 * but does not export: why each counter was chosen or dropped, which
 * frequency source answered, and what on this machine would mislead a
 * benchmark.
 *
 * Apart from main() so that tests can run it over fake counter tables and
 * fixture trees (explain_collect runs a probe for them). */
#ifndef CPUCYCLES_EXPLAIN_H
#define CPUCYCLES_EXPLAIN_H

#include <stdio.h>

#include "counter.h"
#include "persecond.h"
#include "pmu.h"
#include "select.h"

#define EXPLAIN_COUNTERS 64   /* more than any table holds */
#define EXPLAIN_SOURCES 16    /* persecond has 10 sources at most */
#define EXPLAIN_WARNINGS 8
#define EXPLAIN_TEXT 64       /* bytes kept of a rejected source's text */

struct explain_source {
  const char *source;
  enum persecond_verdict verdict;
  char text[EXPLAIN_TEXT];
  size_t len;
  int has_text;
  int cut;                    /* the text went on past EXPLAIN_TEXT */
  const char *unit;
  int error;
  long long value;
};

struct explain_warning {
  const char *key;            /* "governor", "turbo", "boost",
                                 "tsc_not_invariant", "hypervisor",
                                 "hybrid" */
  char text[320];
};

/* A kernel setting: its value, or known 0 when it is not known (the probe
 * did not read it, or it could not be read). */
struct explain_setting {
  int known;
  long value;
};

struct explain {
  const char *root;
  long long persecond;
  int nsources;
  struct explain_source sources[EXPLAIN_SOURCES];
  int count;                  /* counters in the table */
  int nreports;               /* count + 1 with default-zero's */
  struct probe_report reports[EXPLAIN_COUNTERS + 1];
  int chosen;                 /* index in the table; -1: default-zero */
  const char *named;          /* CPUCYCLES_COUNTER, or NULL */
  struct explain_setting paranoid;         /* kernel.perf_event_paranoid */
  struct explain_setting rdpmc;            /* cpu/rdpmc (x86 sysfs) */
  struct explain_setting perf_user_access; /* kernel.perf_user_access */
  int core_pmus;              /* core PMUs in sysfs (pmu.h): 2+ is hybrid */
  struct cpucycles_pmu pmus[CPUCYCLES_PMU_MAX]; /* the first of them */
  int nwarnings;
  struct explain_warning warnings[EXPLAIN_WARNINGS];
};

/* The pieces of explain_collect, for a probe run elsewhere (the
 * library's own first call, cpucycles_probe_observe): start, then each
 * frequency source and counter report as the probe makes them (arg e),
 * then e->persecond and e->chosen set from the probe's result, then the
 * kernel settings (rdpmc and perf_user_access from the reports' settings,
 * perf_event_paranoid read) and the warnings' files under root. */
void explain_start(struct explain *e, const char *root, int count,
                   const char *name);
void explain_keep_source(const struct persecond_source *s, void *arg);
void explain_keep_report(const struct probe_report *r, void *arg);
void explain_machine(struct explain *e);

/* Run the frequency estimate (sources under root, the variable's value
 * envpersecond) and the probe over table[0..count-1] (name as
 * CPUCYCLES_COUNTER) with their reports, then read the kernel settings
 * and the warnings' files under root ("" for the real system).  Returns
 * 0, or -1 when the table is larger than EXPLAIN_COUNTERS.  The chosen
 * counter is released: the tool measures nothing with it. */
int explain_collect(struct explain *e, const char *root,
                    const struct counter *const *table, int count,
                    const char *envpersecond, const char *name);

/* Counter i (0..count, count being default-zero) in words: whether it was
 * chosen, the fact behind it, and the action that would change it ("" when
 * none is known).  Returns 1 when chosen. */
int explain_counter(const struct explain *e, int i, char *fact,
                    size_t factsize, char *action, size_t actionsize);

/* What became of CPUCYCLES_COUNTER (e->named). */
enum explain_named {
  EXPLAIN_NAMED_NONE,         /* not set */
  EXPLAIN_NAMED_USED,         /* its counter works and was chosen */
  EXPLAIN_NAMED_UNKNOWN,      /* no counter of the table, nor default-zero */
  EXPLAIN_NAMED_REFUSED       /* its counter failed: the probe chose */
};
enum explain_named explain_named_outcome(const struct explain *e);

/* cpucycles-info(1) describes both formats. */
void explain_print_text(FILE *out, const struct explain *e);
void explain_print_json(FILE *out, const struct explain *e,
                        const char *version);

/* s[0..len) as a JSON string, quotes included. */
void explain_json_string(FILE *out, const char *s, size_t len);

#endif
