/* cpucycles-info: what libcpucycles finds on this machine, in the lines
 * and order of libcpucycles' own cpucycles-info, so that scripts reading
 * that output read this one.  cpucycles-info(1) says how each line is
 * computed. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpucycles.h"
#include "adapters.h"
#include "environment.h"
#include "explain.h"
#include "measure.h"
#include "select.h"

/* What the command line asks for.  A new report (a more detailed one, or
 * one for machines) is one more action here, one more entry in options[]
 * and one more case in main(). */
enum action {
  ACTION_REPORT,
  ACTION_HELP,
  ACTION_VERSION,
  ACTION_EXPLAIN,
  ACTION_JSON,
  ACTION_USAGE_ERROR
};

static const struct {
  const char *name;
  enum action action;
} options[] = {
  {"--help", ACTION_HELP},
  {"--version", ACTION_VERSION},
  {"--explain", ACTION_EXPLAIN},
  {"--json", ACTION_JSON},
};

/* One option at most; anything unknown, a second option or an operand is
 * a usage error, said on stderr. */
static enum action parse_arguments(int argc, char **argv)
{
  size_t i;

  if (argc < 2) return ACTION_REPORT;
  if (argc > 2) {
    fprintf(stderr, "cpucycles-info: %s: one option at most\n", argv[2]);
    return ACTION_USAGE_ERROR;
  }
  for (i = 0; i < sizeof options / sizeof options[0]; i++)
    if (strcmp(argv[1], options[i].name) == 0) return options[i].action;
  fprintf(stderr, "cpucycles-info: %s: unknown argument\n", argv[1]);
  return ACTION_USAGE_ERROR;
}

static void usage(FILE *out)
{
  fputs("usage: cpucycles-info [--help | --version | --explain | --json]\n"
        "Prints the library version, the probe of every cycle counter built\n"
        "into libcpucycles, the CPU frequency estimate, the counter chosen,\n"
        "and measurements of it; see cpucycles-info(1).\n"
        "  --help     print this text and exit\n"
        "  --version  print the version of libcpucycles and exit\n"
        "  --explain  say why each counter was chosen or dropped, what would\n"
        "             change it, where the frequency estimate comes from and\n"
        "             what on this machine would mislead a benchmark\n"
        "  --json     the same facts as one JSON object\n",
        out);
}

/* The clock for the observed-persecond lines: the library's own
 * microsecond clock (lib/adapters.c), CLOCK_MONOTONIC, which no one can
 * set back (QueryPerformanceCounter on Windows). */
#define microseconds cpucycles_clock_usec

/* Writes to it keep the loop from being optimised away. */
static volatile int sink;

static void print_iqm(void)
{
  long long t[MEASURE_DIFFERENCES + 1];
  int i;

  for (i = 0; i <= MEASURE_DIFFERENCES; i++) t[i] = cpucycles();
  measure_print_iqm(stdout, t);
}

/* Loops of 1024 to 1048576 volatile stores, each timed by the counter and
 * the clock together; a line only where the clock moved enough to say
 * something (measure_observed_bounds). */
static void print_observed(void)
{
  long long loops, j;

  for (loops = 1024; loops <= 1048576; loops *= 2) {
    struct observation o;
    double lo, hi;

    o.t00 = cpucycles();
    o.m0 = microseconds();
    o.t01 = cpucycles();
    for (j = 0; j < loops; j++) sink = 0;
    o.t10 = cpucycles();
    o.m1 = microseconds();
    o.t11 = cpucycles();
    if (!measure_observed_bounds(&o, &lo, &hi)) continue;
    printf("cpucycles observed persecond %.0f...%.0f with %lld loops %lld microseconds\n",
           lo, hi, loops, o.m1 - o.m0);
  }
}

static void report(void)
{
  long long persecond;

  /* The library prints a tracesetup line for each counter it tries, during
   * the first call below, to the same stdout: what is buffered goes first. */
  cpucycles_tracesetup();
  printf("cpucycles version %s\n", cpucycles_version());
  fflush(stdout);
  persecond = cpucycles_persecond();
  printf("cpucycles persecond %lld\n", persecond);
  printf("cpucycles implementation %s\n", cpucycles_implementation());
  print_iqm();
  print_observed();
}

/* The library's own probe, watched: this tool links the library's code,
 * so its first call below is the one probe of the process, and its
 * reports are what --explain and --json present.  CPUCYCLES_INFO_ROOT,
 * for tests, puts /etc, /proc and /sys under a fixture directory for the
 * frequency sources, the kernel settings and the warnings; the counters
 * themselves still ask the real system. */
static int explain(int json)
{
  static struct explain e;
  const char *root = cpucycles_environment("CPUCYCLES_INFO_ROOT");
  struct probe_observer o;
  const char *chosen;
  int i;

  if (cpucycles_counter_count > EXPLAIN_COUNTERS) {
    fputs("cpucycles-info: too many counters to explain\n", stderr);
    return 1;
  }
  explain_start(&e, root ? root : "", cpucycles_counter_count,
                cpucycles_environment("CPUCYCLES_COUNTER"));
  o.root = e.root;
  o.source = explain_keep_source;
  o.counter = explain_keep_report;
  o.arg = &e;
  cpucycles_probe_observe(&o);
  e.persecond = cpucycles_persecond();
  cpucycles_probe_observe(0);
  chosen = cpucycles_implementation();
  e.chosen = -1;
  for (i = 0; i < e.count && i < e.nreports; i++)
    if (strcmp(e.reports[i].name, chosen) == 0) e.chosen = i;
  explain_machine(&e);
  if (json) explain_print_json(stdout, &e, cpucycles_version());
  else explain_print_text(stdout, &e);
  return 0;
}

int main(int argc, char **argv)
{
  enum action parse = parse_arguments(argc, argv);

  switch (parse) {
  case ACTION_HELP:
    usage(stdout);
    break;
  case ACTION_VERSION:
    printf("cpucycles-info (libcpucycles) %s\n", cpucycles_version());
    break;
  case ACTION_USAGE_ERROR:
    usage(stderr);
    return 2;
  case ACTION_REPORT:
    report();
    break;
  case ACTION_EXPLAIN:
  case ACTION_JSON:
    if (explain(parse == ACTION_JSON) != 0) return 1;
    break;
  }
  /* A full disk or a closed pipe is a failure, not a report. */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fputs("cpucycles-info: cannot write to standard output\n", stderr);
    return 1;
  }
  return 0;
}
