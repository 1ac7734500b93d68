/* The CPU frequency estimate behind cpucycles_persecond(): sources in a
 * fixed order (doc/persecond.md), every value parsed strictly and checked
 * for plausibility, a failing source falling through to the next. */
#ifndef CPUCYCLES_PERSECOND_H
#define CPUCYCLES_PERSECOND_H

#include <stddef.h>

/* Close to multiples of 24 MHz, 25 MHz and 19.2 MHz, the common crystals. */
#define CPUCYCLES_PERSECOND_DEFAULT 2399987654LL

/* root: prefix of the /etc, /proc and /sys paths ("" or NULL: the real
   system, the only one whose sysctls are read; tests pass a fixture).
   envvalue: the variable cpucyclespersecond, NULL when unset (the caller
   reads it with secure_getenv).  Never returns <= 0. */
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
  /* the path under the root, the variable's name, "sysctl NAME", or
   * "default" (CPUCYCLES_PERSECOND_DEFAULT, when nothing else answered) */
  const char *source;
  enum persecond_verdict verdict;
  const char *text;       /* what was judged, text[0..len), not NUL- */
  size_t len;             /* terminated; NULL when there is no text */
  const char *unit;       /* the unit the text is read in: "Hz", "kHz", "MHz" */
  int error;              /* errno, PERSECOND_UNREADABLE */
  long long value;        /* Hz, PERSECOND_ACCEPTED */
};

/* Called for each source tried, in order, up to the one accepted; the
 * source lives only during the call. */
typedef void persecond_report_fn(const struct persecond_source *source,
                                 void *arg);

/* cpucycles_persecond_estimate, reporting each source tried to report
 * (with arg) when report is not NULL. */
long long cpucycles_persecond_estimate_reported(const char *root,
                                                const char *envvalue,
                                                persecond_report_fn *report,
                                                void *arg);

/* The forms a frequency is written in (ws: space, tab, CR or LF):
   PERSECOND_INTEGER, the kernel's in sysfs:  digits [ws...]
   PERSECOND_DECIMAL, the kernel's in /proc/cpuinfo:  digits ["." digits] [ws...]
   PERSECOND_SETTING, a person's (/etc/cpucyclespersecond, the variable):
     [ws...] digits ["." digits] [("e"|"E") ["+"|"-"] digits] [ws anything]
     (after at least one ws, a comment that is not read).
   No form has a sign on the number, hex, "nan", "inf", a lone "." at
   either end, or junk glued to the number. */
enum {
  PERSECOND_INTEGER = 0,
  PERSECOND_DECIMAL = 1,
  PERSECOND_SETTING = 2
};

/* The strict parser of every text source: text[0..len) in the given form,
   times 10^unit Hz (0 Hz, 3 kHz, 6 MHz; outside [0, 9] refused), whose
   exact value must lie in [1e6, 1e11] Hz.  Returns 0 and stores it rounded
   to the nearest integer (halves up) in *out, or returns -1 and leaves *out
   alone.  Exact integer arithmetic: locale-independent, no floating point,
   no overflow on any input. */
int cpucycles_persecond_parse(const char *text, size_t len, int form,
                              int unit, long long *out);

#endif
