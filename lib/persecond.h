/* The CPU frequency estimate behind cpucycles_persecond() (doc/persecond.md). */
#ifndef CPUCYCLES_PERSECOND_H
#define CPUCYCLES_PERSECOND_H

#include <stddef.h>

/* Close to multiples of 24 MHz, 25 MHz and 19.2 MHz, the common crystals. */
#define CPUCYCLES_PERSECOND_DEFAULT 2399987654LL

/* root: prefix of the /etc, /proc and /sys paths ("" or NULL: the real
   system, the only one whose sysctls are read).  envvalue: the variable
   cpucyclespersecond, NULL when unset.  Never returns <= 0. */
long long cpucycles_persecond_estimate(const char *root, const char *envvalue);

/* What became of one source, for cpucycles-info --explain. */
enum persecond_verdict {
  PERSECOND_ABSENT,       /* no such file, variable unset, sysctl unknown */
  PERSECOND_UNREADABLE,   /* the file exists but cannot be read: error */
  PERSECOND_NO_VALUE,     /* /proc/cpuinfo without a frequency line */
  PERSECOND_NOT_A_NUMBER, /* text not in the source's form */
  PERSECOND_IMPLAUSIBLE,  /* a number, outside [1 MHz, 100 GHz] */
  PERSECOND_ACCEPTED      /* value is the estimate */
};

struct persecond_source {
  /* path under the root, variable, "sysctl NAME" or "default" */
  const char *source;
  enum persecond_verdict verdict;
  const char *text;       /* what was judged, text[0..len), not NUL- */
  size_t len;             /* terminated; NULL when there is no text */
  const char *unit;       /* the unit the text is read in: "Hz", "kHz", "MHz" */
  int error;              /* errno, PERSECOND_UNREADABLE */
  long long value;        /* Hz, PERSECOND_ACCEPTED */
};

/* Called for each source tried, up to the one accepted. */
typedef void persecond_report_fn(const struct persecond_source *source,
                                 void *arg);

/* The same, reporting each source tried when report is not NULL. */
long long cpucycles_persecond_estimate_reported(const char *root,
                                                const char *envvalue,
                                                persecond_report_fn *report,
                                                void *arg);

/* The forms a frequency is written in (doc/persecond.md, "Strict parsing"):
   the kernel's in sysfs, in /proc/cpuinfo, and a person's setting. */
enum {
  PERSECOND_INTEGER = 0,
  PERSECOND_DECIMAL = 1,
  PERSECOND_SETTING = 2
};

/* text[0..len) in the given form, times 10^unit Hz (unit 0 to 9), whose
   exact value must lie in [1e6, 1e11] Hz: 0 and *out rounded (halves up),
   or -1 and *out untouched.  Exact integer arithmetic, no locale. */
int cpucycles_persecond_parse(const char *text, size_t len, int form,
                              int unit, long long *out);

#endif
