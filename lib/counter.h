/* The interface between the probe and the counters.
 *
 * A counter is one hardware or OS mechanism, described completely by one
 * file under lib/counters/.  Nothing outside that file knows how it reads
 * time.  The probe (select.c) only sees this structure. */
#ifndef CPUCYCLES_COUNTER_H
#define CPUCYCLES_COUNTER_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* What a counter counts.  The kind sets the probe's penalty
 * (libcpucycles-selection.md): an on-core cycle counter is preferred even
 * when it looks noisier than a clock beside the core. */
enum counter_kind {
  COUNTER_ONCORE,    /* the core's own cycle counter: penalty 0 */
  COUNTER_OFFCORE,   /* a clock beside the core (TSC, timer, time base): 100 */
  COUNTER_PERFEVENT, /* cycles read from the kernel with read(): 100 */
  COUNTER_OSCLOCK    /* a fixed-resolution OS clock: 200, and its frequency
                        is never checked against the CPU frequency */
};

struct counter_info {
  enum counter_kind kind;
  /* Ticks per second when the counter does not count CPU cycles and must
   * be scaled by persecond/frequency; 0 when it counts cycles itself. */
  long long frequency;
  /* Only the low 32 bits move; the library extends them to 64 bits. */
  int only32;
  /* The frequency is architectural (a manual's constant, CPUID's
   * invariant-TSC leaf), not a timer whose rate must be a small fraction
   * of the CPU's: scaled by persecond/frequency whatever the ratio, never
   * dropped by the k/2^j test (OS clocks are treated so by their kind). */
  int frequency_exact;
  /* A timer whose rate nobody states here (firmware left CNTFRQ_EL0 0,
   * the OS gives no time-base frequency): frequency is 0, and the probe
   * measures cycles per tick against the clock, as libcpucycles measures
   * every timer's, keeping the timer when the multiplier is close to
   * k/2^j (lib/multiplier.c).  A rate that is stated but implausible is a
   * refusal, not this. */
  int rate_unknown;
  /* Why setup returned -1, for cpucycles-info --explain: a static string
   * naming the fact (the call that failed, the register or setting that
   * said no), or NULL; and the errno behind it, or 0.  The probe clears
   * both before setup; a counter that refuses sets them with
   * counter_refuse().  Nothing in the library acts on them. */
  const char *refusal;
  int refusal_errno;
  /* Set by the setup of a counter that asks (COUNTER_ASKS below) when the
   * kernel could not say whether user mode may run the counter's reads
   * here (a sandbox refused the question, no switch to read): the probe
   * then tries the reads with crash signals caught, as for a counter that
   * cannot ask.  0 when the kernel answered yes, or when nothing can
   * forbid the reads (a system call, an instruction every process may
   * run). */
  int may_fault;
  /* The kernel switch setup read to decide, for cpucycles-info --explain
   * (the tool reports it and does not read it again): name one of
   * CPUCYCLES_SETTING_* below, or NULL when setup read none; known 0 when
   * the switch was looked for and not there (or unreadable).  Cleared by
   * the probe before setup, like refusal; nothing in the library acts on
   * it. */
  struct counter_setting {
    const char *name;
    long value;
    int known;
  } setting;
};

/* The switches a setup may report in info->setting. */
#define CPUCYCLES_SETTING_RDPMC "rdpmc"
#define CPUCYCLES_SETTING_PERF_USER_ACCESS "kernel.perf_user_access"

/* Refusals shared by several counters, which cpucycles-info recognises to
 * say what would change them. */
#define CPUCYCLES_REFUSAL_PERF_OPEN "perf_event_open"
#define CPUCYCLES_REFUSAL_PERF_READ "read of the perf event"
#define CPUCYCLES_REFUSAL_NO_USER_RDPMC \
  "cap_user_rdpmc 0: the kernel offers no user-space reads"
#define CPUCYCLES_REFUSAL_NOT_FIXED "the event is not on fixed counter 1"
#define CPUCYCLES_REFUSAL_RDPMC_SWITCH \
  "RDPMC allowed only with a perf event (rdpmc = 1)"
#define CPUCYCLES_REFUSAL_NO_PMU \
  "no PMU driver: no core PMU in sysfs, and Linux lets no process run RDPMC"
#define CPUCYCLES_REFUSAL_NO_FIXED_COUNTER \
  "no fixed counter 1 (CPUID leaf 0xA)"

/* setup's refusal: record why (see refusal above) and return -1. */
static inline int counter_refuse(struct counter_info *info, const char *why,
                                 int err)
{
  info->refusal = why;
  info->refusal_errno = err;
  return -1;
}

/* How the probe learns whether a counter's code may raise a crash signal
 * (SIGILL, SIGSEGV) in this process: the rule of lib/works.c is to ask
 * where the kernel can answer, and to catch only what cannot be asked. */
enum counter_check {
  /* Only trying tells (arm64-pmc, the arm32, mips64, s390x and sparc64
   * counters): setup and reads run with crash signals caught, and are
   * skipped when they cannot be caught.  0: the default of a counter that
   * says nothing. */
  COUNTER_TRIES = 0,
  /* Setup runs nothing that can fault: it asks the kernel (PR_GET_TSC,
   * the rdpmc switch, the perf page, kernel.perf_user_access) and says in
   * info->may_fault whether the reads still may; the probe runs it with
   * no handler installed and no signal mask changed. */
  COUNTER_ASKS
};

/* A counter of libcpucycles' list for this ISA that was not built here
 * (lib/table.c) has its name and nothing else: read and setup are NULL,
 * and the probe reports it as a dropped line without running anything. */
struct counter {
  const char *name;          /* "amd64-tsc": ISA, dash, mechanism */
  long long (*read)(void);   /* the hot path */
  /* Acquire what the counter needs and describe it.  Returns 0 when the
   * counter can be used here, -1 when not.  For COUNTER_TRIES the probe
   * calls it with crash signals caught, so setup may simply try the
   * instruction; for COUNTER_ASKS it must not. */
  int (*setup)(struct counter_info *info);
  /* Give back what setup acquired (descriptors, mappings) when the counter
   * is not chosen or crashed; NULL when setup acquires nothing. */
  void (*release)(void);
  /* In the child after fork(): drop per-process resources inherited from
   * the parent so that the child counts for itself; NULL when none. */
  void (*atfork_child)(void);
  /* How the probe finds out whether setup and reads may fault (above). */
  enum counter_check check;
};

/* works.c: the probe's catcher, armed at most once per probe and only when
 * a counter that may fault is to be tried.
 *
 * Why catching is not possible, for the probe's report: a crash signal
 * the thread blocked is pending (signal says which), or one it blocks
 * could not be checked (rt_sigpending refused); the signal mask could not
 * be read or changed; sigaction refused; or the handler of signal is not
 * the library's to take or keep: another copy of the library's catcher
 * is installed, or a handler appeared while arming or since. */
enum catch_problem {
  CATCH_READY = 0,
  CATCH_PENDING,
  CATCH_PENDING_UNKNOWN,
  CATCH_MASK_REFUSED,
  CATCH_ACTION_REFUSED,
  CATCH_REPLACED
};

struct catch_status {
  enum catch_problem problem;
  int signal; /* CATCH_PENDING, CATCH_REPLACED: which; else 0 */
};

/* Install the handlers and unblock the crash signals in the calling
 * thread, for the trials to come.  Returns 0 when armed; -1 with the
 * reason in *status when catching is not possible (nothing is then left
 * changed).  One thread at a time (under the library's init once). */
int cpucycles_catch_arm(struct catch_status *status);

/* Run fn(arg) with the calling (arming) thread's crash signals turned
 * into a return value: 0 when fn returned, -1 when a crash signal stopped
 * it (its number in *stopped_by, else 0).  Before running fn it checks
 * that the library's handlers are still installed: where one was
 * replaced, fn is not run, -1 with *stopped_by 0 and the reason in
 * *status.  status and stopped_by may be NULL. */
int cpucycles_catch_try(void (*fn)(void *), void *arg, int *stopped_by,
                        struct catch_status *status);

/* Put back the signal mask and, where the library's handler is still
 * installed, the application's action.  Only after a successful arm. */
void cpucycles_catch_disarm(void);

/* Arm, try once, disarm: run fn(arg) with SIGILL, SIGFPE, SIGBUS, SIGSEGV
 * and SIGABRT caught in the calling thread (other threads' crash signals
 * go on to their own handlers); on Windows, the corresponding exceptions
 * (illegal and privileged instruction, access violation, ...).  Returns 0
 * when fn returned, -1 when one of those signals stopped it (its number
 * in *stopped_by, 0 when fn returned; stopped_by may be NULL), or when fn
 * was not run because the catcher could not be armed.  What the tests of
 * the catcher use; the probe arms once for all its trials. */
static inline int cpucycles_works_signal(void (*fn)(void *), void *arg,
                                         int *stopped_by)
{
  int result;
  if (stopped_by) *stopped_by = 0;
  if (cpucycles_catch_arm(0) != 0) return -1;
  result = cpucycles_catch_try(fn, arg, stopped_by, 0);
  cpucycles_catch_disarm();
  return result;
}

static inline int cpucycles_works(void (*fn)(void *), void *arg)
{
  return cpucycles_works_signal(fn, arg, 0);
}

/* The fallback that always answers; never in the probe's table. */
extern const struct counter cpucycles_counter_default_zero;

/* table.c: the counters of libcpucycles' list for this host, in preference
 * order for ties: those configure built, and those not built (setup NULL). */
extern const struct counter *const cpucycles_counter_table[];
extern const int cpucycles_counter_count;

#endif
