/* The interface between the probe (select.c) and the counters: one file
 * under lib/counters/ per mechanism, the only one that knows how it reads. */
#ifndef CPUCYCLES_COUNTER_H
#define CPUCYCLES_COUNTER_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* What a counter counts; sets the probe's penalty (cpucycles_penalty_of). */
enum counter_kind {
  COUNTER_ONCORE,    /* the core's own cycle counter */
  COUNTER_OFFCORE,   /* a clock beside the core (TSC, timer, time base) */
  COUNTER_PERFEVENT, /* cycles read from the kernel with read() */
  COUNTER_OSCLOCK    /* a fixed-resolution OS clock: its frequency is never
                        checked against the CPU frequency */
};

struct counter_info {
  enum counter_kind kind;
  /* Ticks per second when the counter does not count CPU cycles and must
   * be scaled by persecond/frequency; 0 when it counts cycles itself. */
  long long frequency;
  /* Only the low 32 bits move; the library extends them to 64 bits. */
  int only32;
  /* The frequency is architectural (a manual's constant, CPUID's
   * invariant-TSC leaf): scaled by persecond/frequency whatever the ratio,
   * never dropped by the k/2^j test (OS clocks are so by their kind). */
  int frequency_exact;
  /* A timer whose rate nobody states (firmware left CNTFRQ_EL0 0, no
   * time-base frequency): frequency 0, and the probe measures cycles per
   * tick as libcpucycles does (lib/multiplier.c).  A stated but
   * implausible rate is a refusal, not this. */
  int rate_unknown;
  /* Why setup returned -1, for cpucycles-info --explain: a static string
   * naming the fact, or NULL, and the errno behind it, or 0 (set with
   * counter_refuse(); cleared by the probe before setup).  Nothing in the
   * library acts on them, nor on setting below. */
  const char *refusal;
  int refusal_errno;
  /* Set by a COUNTER_ASKS setup when the kernel could not say whether
   * user mode may run the reads (a sandbox refused the question, no switch
   * to read): the probe then tries them with crash signals caught.  0 when
   * the kernel said yes or nothing can forbid the reads. */
  int may_fault;
  /* The kernel switch setup read to decide, for --explain (which does not
   * read it again): one of CPUCYCLES_SETTING_*, or NULL; known 0 when the
   * switch was looked for and not there (or unreadable). */
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

/* setup's yes: the counter's kind, frequency (0: it counts cycles) and
 * only32 recorded; returns 0. */
static inline int counter_accept(struct counter_info *info,
                                 enum counter_kind kind, long long frequency,
                                 int only32)
{
  info->kind = kind;
  info->frequency = frequency;
  info->only32 = only32;
  return 0;
}

/* How the probe learns whether a counter's code may raise a crash signal
 * (SIGILL, SIGSEGV): ask where the kernel can answer, catch only what
 * cannot be asked (lib/works.c). */
enum counter_check {
  /* Only trying tells: setup and reads run with crash signals caught, and
   * are skipped when they cannot be caught.  The default (0). */
  COUNTER_TRIES = 0,
  /* Setup runs nothing that can fault: it asks the kernel (PR_GET_TSC,
   * the rdpmc switch, the perf page, kernel.perf_user_access) and says in
   * info->may_fault whether the reads still may; it runs with no handler
   * installed and no signal mask changed. */
  COUNTER_ASKS
};

/* A counter of libcpucycles' list that was not built here (lib/table.c)
 * has its name only: read and setup NULL, reported as a dropped line. */
struct counter {
  const char *name;          /* "amd64-tsc": ISA, dash, mechanism */
  long long (*read)(void);   /* the hot path */
  /* Acquire what the counter needs and describe it: 0 when it can be used
   * here, else -1.  Under COUNTER_TRIES it may simply try the instruction;
   * under COUNTER_ASKS it must not. */
  int (*setup)(struct counter_info *info);
  /* Give back what setup acquired when the counter is not chosen or
   * crashed; NULL when setup acquires nothing. */
  void (*release)(void);
  /* In the child after fork(): drop inherited per-process resources so
   * that the child counts for itself; NULL when none. */
  void (*atfork_child)(void);
  enum counter_check check;
};

/* works.c: the probe's catcher, armed at most once per probe and only when
 * a counter that may fault is to be tried.  Why catching is not possible: */
enum catch_problem {
  CATCH_READY = 0,
  CATCH_PENDING,         /* a crash signal the thread blocked is pending */
  CATCH_PENDING_UNKNOWN, /* could not be checked (rt_sigpending refused) */
  CATCH_MASK_REFUSED,    /* the signal mask could not be read or changed */
  CATCH_ACTION_REFUSED,  /* sigaction refused */
  CATCH_REPLACED         /* the handler is not the library's to take or
                            keep: another copy of the catcher is installed,
                            or a handler appeared while arming or since */
};

struct catch_status {
  enum catch_problem problem;
  int signal; /* CATCH_PENDING, CATCH_REPLACED: which; else 0 */
};

/* Install the handlers and unblock the crash signals in the calling
 * thread: 0 when armed; -1 with the reason in *status, nothing left
 * changed.  One thread at a time (under the library's init once). */
int cpucycles_catch_arm(struct catch_status *status);

/* Run fn(arg) in the arming thread: 0 when fn returned, -1 when a crash
 * signal stopped it (its number in *stopped_by, else 0), or when a handler
 * was replaced (fn not run; the reason in *status).  Both may be NULL. */
int cpucycles_catch_try(void (*fn)(void *), void *arg, int *stopped_by,
                        struct catch_status *status);

/* Put back the signal mask and, where the library's handler is still
 * installed, the application's action.  Only after a successful arm. */
void cpucycles_catch_disarm(void);

/* The probe's answer (select.h), which the wrappers install (adapters.h). */
struct choice {
  const struct counter *counter; /* never NULL: default-zero at worst */
  struct counter_info info;
  double scaling;                /* cycles per tick */
  long long precision;           /* in cycles, penalty included */
};

/* The fallback that always answers; never in the probe's table. */
extern const struct counter cpucycles_counter_default_zero;

/* table.c: libcpucycles' list for this host, in preference order. */
extern const struct counter *const cpucycles_counter_table[];
extern const int cpucycles_counter_count;

#endif
